import {
  LEGACY_REFERRERS,
  REFERRERS_ANNOTATION,
  REFERRERS_FINALIZER,
  TEMPORAL_UI_ANNOTATION,
  TRANSLATION_FINALIZER,
  VM_CLOUD_ANNOTATION,
  PEERPOD_FINALIZER,
} from '../model/vocabulary';
import { podVmAnnotations } from '../activities/kubernetes/peerpods';
import { table } from './operator';
import { POLLER_WINDOW_MS } from './pollers';
import { changePatch, formatUninstall, planUninstall, refusals, type ListedObject } from './uninstall-plan';

const object = (o: Partial<ListedObject> & Pick<ListedObject, 'kind' | 'name'>): ListedObject => ({
  annotations: {},
  finalizers: [],
  resourceVersion: '7',
  ...o,
});
const referrers = JSON.stringify([{ kind: 'Pod', namespace: 'default', name: 'web-1' }]);

describe('planUninstall: what Steward added, object by object', () => {
  it.each([
    {
      what: "a Node with Pods: the referrers annotation and finalizer go, midonet-kubernetes' annotations and others' finalizers stay",
      given: object({
        kind: 'Node',
        name: 'node1',
        annotations: { [REFERRERS_ANNOTATION]: referrers, 'midonet.org/host-id': 'h1' },
        finalizers: ['example.com/keep', REFERRERS_FINALIZER],
      }),
      removed: { annotations: [REFERRERS_ANNOTATION], finalizers: [REFERRERS_FINALIZER] },
      patch: {
        metadata: {
          resourceVersion: '7',
          annotations: { [REFERRERS_ANNOTATION]: null },
          finalizers: ['example.com/keep'],
        },
      },
    },
    {
      what: 'a Service an earlier Steward marked under the old name: both old names go',
      given: object({
        kind: 'Service',
        namespace: 'default',
        name: 'web',
        annotations: { [LEGACY_REFERRERS]: referrers },
        finalizers: [LEGACY_REFERRERS],
      }),
      removed: { annotations: [LEGACY_REFERRERS], finalizers: [LEGACY_REFERRERS] },
      patch: { metadata: { resourceVersion: '7', annotations: { [LEGACY_REFERRERS]: null }, finalizers: [] } },
    },
    {
      what: 'a peer pod: its VM annotations go, its finalizers are not looked at',
      given: object({
        kind: 'Pod',
        namespace: 'default',
        name: 'p',
        annotations: { [podVmAnnotations.instance]: 'libvirt/x', [podVmAnnotations.name]: 'podvm-p', other: 'kept' },
        finalizers: ['example.com/keep'],
      }),
      removed: { annotations: [podVmAnnotations.instance, podVmAnnotations.name].sort(), finalizers: [] },
      patch: {
        metadata: {
          resourceVersion: '7',
          annotations: { [podVmAnnotations.instance]: null, [podVmAnnotations.name]: null },
        },
      },
    },
    {
      what: "a Translation: only the Temporal UI link goes; midonet-kubernetes' finalizer stays",
      given: object({
        kind: 'Translation',
        namespace: 'default',
        name: 'pod.4.web-1',
        annotations: { [TEMPORAL_UI_ANNOTATION]: 'http://ui/x' },
        finalizers: [TRANSLATION_FINALIZER],
      }),
      removed: { annotations: [TEMPORAL_UI_ANNOTATION], finalizers: [] },
      patch: { metadata: { resourceVersion: '7', annotations: { [TEMPORAL_UI_ANNOTATION]: null } } },
    },
    {
      what: "a PeerPod Steward wrote: the link goes, the VM's cloud and peerpod-ctrl's finalizer stay",
      given: object({
        kind: 'PeerPod',
        namespace: 'default',
        name: 'p',
        annotations: { [TEMPORAL_UI_ANNOTATION]: 'http://ui/x', [VM_CLOUD_ANNOTATION]: 'libvirt:u' },
        finalizers: [PEERPOD_FINALIZER],
      }),
      removed: { annotations: [TEMPORAL_UI_ANNOTATION], finalizers: [] },
      patch: { metadata: { resourceVersion: '7', annotations: { [TEMPORAL_UI_ANNOTATION]: null } } },
    },
  ])('$what', ({ given, removed, patch }) => {
    const [change, ...more] = planUninstall([given]);
    expect(more).toEqual([]);
    expect(change).toMatchObject({ kind: given.kind, name: given.name, ...removed });
    expect(changePatch(change!)).toEqual(patch);
  });

  it('plans nothing for objects Steward never wrote on, nor for a midonet-kubernetes Translation as it wrote it', () => {
    expect(
      planUninstall([
        object({ kind: 'Node', name: 'n', annotations: { 'midonet.org/host-id': 'h' } }),
        object({ kind: 'Endpoints', namespace: 'default', name: 'web' }),
        object({ kind: 'Translation', namespace: 'default', name: 't', finalizers: [TRANSLATION_FINALIZER] }),
      ]),
    ).toEqual([]);
  });
});

describe('refusals: whether Steward still runs', () => {
  const now = 1_000_000;
  const lease = { namespace: 'kube-system', name: 'steward-starter' };
  const poller = (ageMs: number) => ({
    taskQueue: 'steward',
    type: 'workflow' as const,
    identity: '1@w',
    lastAccessMs: now - ageMs,
  });

  it('refuses while a worker polled within the window, and names it', () => {
    expect(refusals({ pollers: [poller(10_000)], lease }, now)).toEqual([
      'worker 1@w polled task queue steward (workflow) 10 s ago',
    ]);
  });

  it('lets a worker that stopped polling longer ago than the window go (Temporal keeps listing it for minutes)', () => {
    expect(refusals({ pollers: [poller(POLLER_WINDOW_MS + 1)], lease }, now)).toEqual([]);
  });

  it('refuses while a starter holds its Lease; a released or expired Lease does not count', () => {
    const held = { ...lease, holder: 's-1', renewMs: now - 2_000, durationSeconds: 15 };
    expect(refusals({ lease: held }, now)).toEqual([
      'starter s-1 holds Lease kube-system/steward-starter (renewed 2 s ago)',
    ]);
    expect(refusals({ lease: { ...held, holder: undefined } }, now)).toEqual([]);
    expect(refusals({ lease: { ...held, renewMs: now - 16_000 } }, now)).toEqual([]);
  });
});

describe('formatUninstall', () => {
  it('says what was checked, what changes (or would), the Lease, and what stays for midonet-kubernetes', () => {
    const [change] = planUninstall([
      object({
        kind: 'Node',
        name: 'node1',
        annotations: { [REFERRERS_ANNOTATION]: referrers },
        finalizers: [REFERRERS_FINALIZER],
      }),
    ]);
    const text = formatUninstall(
      {
        dryRun: true,
        checked: ['the Lease'],
        wouldRefuse: ['worker 1@w polled task queue steward (workflow) 3 s ago'],
        changes: [change!],
        lease: 'kube-system/steward-starter',
        kept: { translations: 3, peerPods: 0 },
      },
      table,
    );
    expect(text).toContain('checked: the Lease');
    expect(text).toContain('would refuse now');
    expect(text).toContain('would remove what Steward added to 1 objects (dry run: nothing changed)');
    expect(text).toMatch(/Node\s+node1\s+steward\.dev\/referrers\s+steward\.dev\/referrers/);
    expect(text).toContain("would delete the starter's Lease kube-system/steward-starter");
    expect(text).toContain('left for midonet-kubernetes: 3 Translations');
  });
});
