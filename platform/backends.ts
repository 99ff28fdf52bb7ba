import { z } from 'zod';
import { SWEEP_BACKENDS, type SweepBackend } from '../model/sweep-report';
import { WATCHED_KINDS, type WatchedKind } from './kubernetes/kinds';
import type { Setting } from './settings';

/**
 * What an installation drives: MidoNet (the pod network: Nodes, Pods, Services, Endpoints, Translations and the
 * global setup), peer pods (cloud VMs: PeerPods and the Pods behind them), or both. One setting that the starter, the
 * worker and the sweeper all read, so that what is watched, what runs and what is swept never disagree: a peer-pods
 * cluster beside cloud-api-adaptor has no MidoNet, and a MidoNet cluster may have no cloud.
 */
export const BACKENDS = ['midonet', 'peerpods'] as const;
export type Backend = (typeof BACKENDS)[number];

export const backendsSetting = {
  env: 'STEWARD_BACKENDS',
  arg: 'list',
  description:
    'what this installation drives: midonet, peerpods, or both comma-separated; each one named requires its settings, peerpods alone needs no MidoNet setting and midonet alone no cloud',
  whenUnset: "both, the worker running each backend's activities where its settings are given",
} satisfies Setting;

/** `peerpods`, `midonet`, or both comma-separated (in any order); absent: both (see `installation`). */
export const backendsSchema = z.string().transform((text, ctx) => {
  const names = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = names.filter((n) => !(BACKENDS as readonly string[]).includes(n));
  if (unknown.length || names.length === 0) {
    ctx.addIssue({
      code: 'custom',
      message: `must be peerpods, midonet, or both comma-separated (peerpods,midonet); got "${text}"`,
    });
    return z.NEVER;
  }
  return BACKENDS.filter((b) => names.includes(b));
});

/** What an installation of these backends watches, starts and sweeps. */
export interface Installation {
  backends: readonly Backend[];
  /** The kinds the starter watches. */
  watched: readonly WatchedKind[];
  /**
   * The watched kinds whose objects get a lifecycle workflow of their own. Without MidoNet a Pod has none: it only
   * feeds its peer pod's (`peerpod/<ns>/<pod>`), and only with peer pods does it feed that one.
   */
  lifecycles: readonly WatchedKind[];
  /** Whether the `global/midonet` setup workflow runs. */
  globalSetup: boolean;
  /** What the scheduled sweep covers unless told otherwise: the cloud for peer pods, MidoNet for MidoNet. */
  sweep: readonly SweepBackend[];
}

const KINDS: Record<Backend, readonly WatchedKind[]> = {
  midonet: ['Node', 'Pod', 'Service', 'Endpoints', 'Translation'],
  peerpods: ['Pod', 'PeerPod'],
};
const SWEPT: Record<SweepBackend, Backend> = { cloud: 'peerpods', midonet: 'midonet' };

/** The installation of `backends` (all of them when absent, as before the setting existed). */
export function installation(backends: readonly Backend[] = BACKENDS): Installation {
  const has = (b: Backend) => backends.includes(b);
  const watched = WATCHED_KINDS.filter((kind) => backends.some((b) => KINDS[b].includes(kind)));
  return {
    backends,
    watched,
    lifecycles: has('midonet') ? watched : watched.filter((kind) => kind !== 'Pod'),
    globalSetup: has('midonet'),
    sweep: SWEEP_BACKENDS.filter((s) => has(SWEPT[s])),
  };
}

/** The sweep backends of `wanted` that this installation lacks, each with why (empty: all of them are installed). */
export const sweepBackendsNotInstalled = (wanted: readonly SweepBackend[], installed: Installation): string[] =>
  wanted
    .filter((s) => !installed.sweep.includes(s))
    .map((s) => `${s} is not swept here: ${backendsSetting.env} does not name ${SWEPT[s]}`);
