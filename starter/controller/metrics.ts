import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { WatchedKind } from '../../platform/kubernetes/kinds';

/**
 * The starter's Prometheus metrics: who leads, what waits, how sends go and how fresh the informers' view is. Gauges
 * of state are read at scrape time (`collect`), so they never lag what they describe.
 */

/** A send attempt's outcome: delivered, failed and retried with backoff, or failed for good (sent again on the next change or re-list). */
export const SEND_RESULTS = ['sent', 'transient_error', 'permanent_error'] as const;
export type SendResult = (typeof SEND_RESULTS)[number];

export interface StarterReadings {
  kinds: readonly WatchedKind[];
  isLeader: () => boolean;
  /** Observations waiting or in flight. */
  queueDepth: () => number;
  /** Milliseconds; tests move time by hand. */
  now?: () => number;
}

export interface StarterMetrics {
  /** One attempt to deliver an Observation to a workflow of `kind` (the Observation's: PeerPod for a peer pod's Pod). */
  sendDone: (kind: WatchedKind, result: SendResult, seconds: number) => void;
  informerRestarted: (kind: WatchedKind) => void;
  listed: (kind: WatchedKind) => void;
  /** A PeerPod of a cloud not served here, left to its own controller (once per PeerPod). */
  peerPodNotServed: (cloud: string) => void;
}

export function createStarterMetrics(
  registry: Registry,
  { kinds, isLeader, queueDepth, now = Date.now }: StarterReadings,
): StarterMetrics {
  const registers = [registry];
  const listedAt = new Map<WatchedKind, number>();
  new Gauge({
    name: 'steward_starter_leader',
    help: 'Whether this starter holds the Lease and sends (1) or follows (0)',
    registers,
    collect() {
      this.set(isLeader() ? 1 : 0);
    },
  });
  new Gauge({
    name: 'steward_starter_queue_depth',
    help: 'Observations waiting to be sent or in flight',
    registers,
    collect() {
      this.set(queueDepth());
    },
  });
  new Gauge({
    name: 'steward_starter_last_relist_timestamp_seconds',
    help: 'When the oldest of the watched kinds was last listed in full (Unix time; 0 until every kind was): time() minus it is the age of the last complete re-list',
    registers,
    collect() {
      const times = kinds.map((kind) => listedAt.get(kind));
      this.set(times.every((t) => t !== undefined) ? Math.min(...times) / 1000 : 0);
    },
  });
  const sends = new Counter({
    name: 'steward_starter_sends_total',
    help: "Attempts to deliver an Observation to its object's workflow, by the workflow's kind and result (sent, transient_error, permanent_error)",
    labelNames: ['kind', 'result'],
    registers,
  });
  const sendSeconds = new Histogram({
    name: 'steward_starter_send_duration_seconds',
    help: "Duration of each attempt to deliver an Observation (one start or signal-with-start call), by the workflow's kind and result",
    labelNames: ['kind', 'result'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  const restarts = new Counter({
    name: 'steward_starter_informer_restarts_total',
    help: 'Informers that stopped on an error and were restarted from a fresh list, by kind',
    labelNames: ['kind'],
    registers,
  });
  const notServed = new Counter({
    name: 'steward_starter_peerpods_not_served_total',
    help: 'PeerPods left to their own controller because their cloud (spec.cloudProvider) is not one this installation serves, by cloud; each counted once while it lives',
    labelNames: ['cloud'],
    registers,
  });
  // Every series from the start, so that rate() and absence alerts see a zero rather than nothing.
  for (const kind of kinds) {
    for (const result of SEND_RESULTS) sends.inc({ kind, result }, 0);
    restarts.inc({ kind }, 0);
  }
  return {
    sendDone: (kind, result, seconds) => {
      sends.inc({ kind, result });
      sendSeconds.observe({ kind, result }, seconds);
    },
    informerRestarted: (kind) => restarts.inc({ kind }),
    listed: (kind) => void listedAt.set(kind, now()),
    peerPodNotServed: (cloud) => notServed.inc({ cloud }),
  };
}
