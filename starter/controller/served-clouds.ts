import type { Logger } from 'pino';
import { MANAGED_BY_LABEL, MANAGED_BY_STEWARD } from '../../model/vocabulary';
import type { SourceEvent } from '../../platform/kubernetes/informer';
import type { StarterMetrics } from './metrics';

/**
 * PeerPods of clouds this installation does not serve: left exactly as they are, to the controller that serves them
 * (peerpod-ctrl serves a cloud per PeerPod), since a workflow of Steward's could only hold their finalizer and wait
 * for a worker of that cloud that never comes. Each is said once, in the log and the metric, not at every event.
 * A PeerPod Steward wrote is never another controller's: its workflow made the VM and holds its finalizer, so even a
 * starter told no cloud (its settings short of the workers') sends its deletion, or the finalizer would stay.
 */
export interface ServedClouds {
  /** True when the event is of a PeerPod another controller serves: nothing is sent for it. */
  leftAlone(event: SourceEvent): boolean;
}

/** The cloud a PeerPod names (`spec.cloudProvider`) when it is one not in `served`; a PeerPod naming none is served. */
export function unservedCloud(event: SourceEvent, served: ReadonlySet<string>): string | undefined {
  if (event.kind !== 'PeerPod') return undefined;
  if (event.object.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY_STEWARD) return undefined;
  const cloud = (event.object as { spec?: { cloudProvider?: unknown } }).spec?.cloudProvider;
  return typeof cloud === 'string' && cloud !== '' && !served.has(cloud) ? cloud : undefined;
}

/** `served` absent: every PeerPod is served (callers that are no installation: tests of other things). */
export function createServedClouds(
  served: readonly string[] | undefined,
  log: Logger,
  metrics: Pick<StarterMetrics, 'peerPodNotServed'>,
): ServedClouds {
  const clouds = served ? new Set(served) : undefined;
  // UIDs already said; forgotten when the PeerPod goes, so it holds only live ones.
  const said = new Set<string>();
  return {
    leftAlone(event) {
      const cloud = clouds && unservedCloud(event, clouds);
      if (!cloud) return false;
      const { uid = '', namespace, name } = event.object.metadata ?? {};
      if (event.type === 'delete') said.delete(uid);
      else if (!said.has(uid)) {
        said.add(uid);
        metrics.peerPodNotServed(cloud);
        log.info(
          { namespace, name, cloud, served: [...clouds] },
          'PeerPod left to its own controller: its cloud is not one this installation serves (STEWARD_PEERPOD_CLOUDS)',
        );
      }
      return true;
    },
  };
}
