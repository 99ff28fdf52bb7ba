// Carries out one operation against the API server, as a user (and a kubelet, for a Pod's status) would. Tolerant:
// the stack may be mid-fault and an object may still be finalizing, so every answer becomes the operation's outcome
// in the log instead of an error, and the run goes on.
import * as k8s from '@kubernetes/client-node';
import { sleep } from '../../deploy/local/process';
import { createEndpoints, createNode, createPod, createService } from '../support/objects-harness';
import { createTranslation, deleteTranslation, patchResources } from '../support/pusher-harness';
import { TRANSLATION_API } from '../../model/naming';
import {
  endpointsProjection,
  handWritten,
  NAMESPACE,
  nodeProjection,
  PEER_POD_RUNTIME_CLASS,
  podProjection,
  serviceProjection,
  type ObjectSpec,
  type Op,
} from './ops';

export interface Clients {
  core: k8s.CoreV1Api;
  custom: k8s.CustomObjectsApi;
  tenant: string;
}

const merge = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch);
const codeOf = (error: unknown) => (error as { code?: number }).code;

/** How long a re-creation waits for the old incarnation to finish finalizing. */
const RECREATE_WAIT_MS = 20_000;

export async function execute(c: Clients, op: Op): Promise<string> {
  const [kind, ref] = op.target.split(' ') as [ObjectSpec['kind'], string];
  const name = ref.includes('/') ? ref.split('/')[1]! : ref;
  try {
    switch (op.action) {
      case 'create':
        return await create(c, op.spec!);
      case 'update':
        return await update(c, op.spec!);
      case 'delete':
        return await remove(c, kind, name);
      case 'recreate': {
        const deleted = await remove(c, kind, name);
        const deadline = Date.now() + RECREATE_WAIT_MS;
        while (await exists(c, kind, name)) {
          if (Date.now() > deadline)
            return `${deleted}; still there after ${RECREATE_WAIT_MS / 1000} s, not created again`;
          await sleep(250);
        }
        return `${deleted}; ${await create(c, op.spec!)}`;
      }
    }
  } catch (error) {
    const code = codeOf(error);
    return `failed: ${code ?? ''} ${(error as Error).message.split('\n')[0]!.slice(0, 160)}`;
  }
}

async function create(c: Clients, spec: ObjectSpec): Promise<string> {
  try {
    switch (spec.kind) {
      case 'Node':
        await createNode(c, nodeProjection(spec));
        break;
      case 'Pod':
        await createPod(c, podProjection(spec), spec.peer ? PEER_POD_RUNTIME_CLASS : undefined);
        break;
      case 'Service':
        await createService(c, serviceProjection(spec));
        break;
      case 'Endpoints':
        await createEndpoints(c, endpointsProjection(spec));
        break;
      case 'Translation':
        await createTranslation(c, handWritten(spec, c.tenant));
        break;
    }
    return 'created';
  } catch (error) {
    // Still finalizing (or never deleted: an earlier delete failed): the operation becomes an update.
    if (codeOf(error) === 409) return `exists, ${await update(c, spec)}`;
    throw error;
  }
}

async function update(c: Clients, spec: ObjectSpec): Promise<string> {
  const { name } = spec;
  const namespace = NAMESPACE;
  try {
    switch (spec.kind) {
      case 'Node': {
        const p = nodeProjection(spec);
        await c.core.patchNode(
          {
            name,
            body: {
              metadata: {
                annotations: { ...p.metadata.annotations, ...(spec.mac ? {} : { 'midonet.org/mac-address': null }) },
              },
            },
          },
          merge,
        );
        await c.core.patchNodeStatus({ name, body: { status: { addresses: p.status.addresses } } }, merge);
        break;
      }
      case 'Pod': {
        const p = podProjection(spec);
        await c.core.patchNamespacedPod(
          { name, namespace, body: { metadata: { annotations: { 'midonet.org/mac-address': spec.mac ?? null } } } },
          merge,
        );
        await c.core.patchNamespacedPodStatus(
          {
            name,
            namespace,
            body: {
              status: { phase: p.status.phase, ...(spec.ip ? { podIP: spec.ip, podIPs: [{ ip: spec.ip }] } : {}) },
            },
          },
          merge,
        );
        break;
      }
      case 'Service':
        await c.core.patchNamespacedService({ name, namespace, body: { spec: { ports: spec.ports } } }, merge);
        break;
      case 'Endpoints':
        await c.core.patchNamespacedEndpoints({ name, namespace, body: { subsets: spec.subsets } }, merge);
        break;
      case 'Translation':
        await patchResources({ custom: c.custom, namespace }, name, handWritten(spec, c.tenant).resources);
        break;
    }
    return 'updated';
  } catch (error) {
    if (codeOf(error) === 404) return `absent, ${await create(c, spec)}`;
    throw error;
  }
}

/** Reading and deleting one object of each kind by name; a Pod goes at once (no kubelet confirms a graceful deletion). */
function byName(
  c: Clients,
  kind: ObjectSpec['kind'],
  name: string,
): { read: () => Promise<unknown>; remove: () => Promise<unknown> } {
  const namespace = NAMESPACE;
  switch (kind) {
    case 'Node':
      return { read: () => c.core.readNode({ name }), remove: () => c.core.deleteNode({ name }) };
    case 'Pod':
      return {
        read: () => c.core.readNamespacedPod({ name, namespace }),
        remove: () => c.core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 }),
      };
    case 'Service':
      return {
        read: () => c.core.readNamespacedService({ name, namespace }),
        remove: () => c.core.deleteNamespacedService({ name, namespace }),
      };
    case 'Endpoints':
      return {
        read: () => c.core.readNamespacedEndpoints({ name, namespace }),
        remove: () => c.core.deleteNamespacedEndpoints({ name, namespace }),
      };
    case 'Translation':
      return {
        read: () => c.custom.getNamespacedCustomObject({ ...TRANSLATION_API, namespace, name }),
        remove: () => deleteTranslation({ custom: c.custom, namespace }, name),
      };
  }
}

/** `call`'s answer, or `absent` when the object is not there (404). */
async function unless404<T>(call: () => Promise<unknown>, answer: T, absent: T): Promise<T> {
  try {
    await call();
    return answer;
  } catch (error) {
    if (codeOf(error) === 404) return absent;
    throw error;
  }
}

const remove = (c: Clients, kind: ObjectSpec['kind'], name: string) =>
  unless404(byName(c, kind, name).remove, 'deleted', 'already gone');
const exists = (c: Clients, kind: ObjectSpec['kind'], name: string) =>
  unless404(byName(c, kind, name).read, true, false);
