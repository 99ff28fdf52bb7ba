/**
 * How a peer pod's VM and its PeerPod are named and tied to their Pod, as cloud-api-adaptor does it: the workflow
 * names the VM, the cloud providers tag it, the watcher and the activities find the Pod a PeerPod belongs to.
 */

/**
 * `podvm-<pod name>-<8 chars of the pod UID>`, at most 63 characters (cloud-api-adaptor's scheme, the pod UID for the
 * sandbox id). The VM made again for the same pod after one was lost (`replacement` 1, 2 …) gets `-<n>` after it, the
 * pod's part cut to make room: a name of its own, so a lost VM still shutting down is never taken for it.
 */
export function vmName(podName: string, podUid: string, replacement = 0): string {
  const uid = sanitize(podUid).replace(/-/g, '').slice(0, 8);
  if (replacement === 0) return `podvm-${vmNamePodPart(podName)}-${uid}`;
  const suffix = `-${replacement}`;
  return `podvm-${vmNamePodPart(podName).slice(0, 48 - suffix.length)}-${uid}${suffix}`;
}

/**
 * The Pod a PeerPod belongs to: its controller reference, else its first (upstream compares `ownerReferences[0]`; the
 * controller reference is the one that means "owned by").
 */
export function peerPodOwner<R extends { kind: string; controller?: boolean }>(
  ownerReferences: readonly R[] = [],
): R | undefined {
  return ownerReferences.find((r) => r.kind === 'Pod' && r.controller) ?? ownerReferences[0];
}

/** Upstream's `util.sanitize`: lower case, every rune other than [a-z0-9-] becomes `-`. */
const sanitize = (s: string) => Array.from(s.toLowerCase(), (c) => (/^[a-z0-9-]$/.test(c) ? c : '-')).join('');

/** The pod's part of its VM's name (upstream's `GenerateInstanceName(pod, sandbox, 63)`): sanitized, cut to 48. */
export const vmNamePodPart = (podName: string) => sanitize(podName).slice(0, 48);

/**
 * The shape of every VM name cloud-api-adaptor gives (`GenerateInstanceName(pod, sandbox, 63)`, src/cloud-providers/
 * util/instance.go): `podvm-`, the sanitized pod name cut to 48, `-`, the first 8 hex digits of the sandbox ID. The
 * sweep looks for cloud-api-adaptor's leaked VMs only among names of exactly this shape.
 */
export const UPSTREAM_VM_NAME = /^podvm-[a-z0-9-]{1,48}-[0-9a-f]{8}$/;

/** The pod's part of a name of `UPSTREAM_VM_NAME`'s shape (between `podvm-` and the 8 hex digits). */
export const upstreamVmPodPart = (vmName: string) => vmName.slice('podvm-'.length, -'-01234567'.length);
