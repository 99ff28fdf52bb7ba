import * as k8s from '@kubernetes/client-node';
import type { Logger } from 'pino';

export interface LeaseOptions {
  /** Default `steward-starter`. */
  name?: string;
  /** Default `kube-system`. */
  namespace?: string;
  /** How long others wait, after they last saw the Lease change, before they take it. Default 15. */
  leaseDurationSeconds?: number;
  /** How often the holder renews and the others try to acquire. Default 5; must be below the lease duration. */
  renewSeconds?: number;
}

export type LeaseApi = Pick<
  k8s.CoordinationV1Api,
  'readNamespacedLease' | 'createNamespacedLease' | 'replaceNamespacedLease'
>;

export interface LeaderElectorOptions {
  api: LeaseApi;
  identity: string;
  lease?: LeaseOptions;
  logger: Logger;
  /**
   * Both edges of leadership. On acquiring, `continued` says the Lease stayed ours the whole time it was not counted
   * as led (a lapse): nobody else can have sent anything meanwhile.
   */
  onChange?: (leading: boolean, continued: boolean) => void;
  /** Milliseconds; tests move time by hand. */
  now?: () => number;
}

export interface LeaderElector {
  /** Tries at once, then every `renewSeconds`. */
  start(): void;
  /** Stops trying and, if leading, releases the Lease so another starter takes over without waiting it out. */
  stop(): Promise<void>;
  /** Leading, and the last renewal is recent enough that nobody else can have taken over. */
  isLeader(): boolean;
  /** The last acquire-or-renew round; undefined before the first ended. */
  lastRound(): LeaseRound | undefined;
  /** One acquire-or-renew round (the loop's step, exposed for tests). */
  tick(): Promise<void>;
}

/** When a round ended, and whether it read the Lease: then who holds it is known, this starter or another. */
export interface LeaseRound {
  at: number;
  leaseKnown: boolean;
}

export const DEFAULT_LEASE = {
  name: 'steward-starter',
  namespace: 'kube-system',
  leaseDurationSeconds: 15,
  renewSeconds: 5,
} as const;

const statusOf = (error: unknown) => (error instanceof k8s.ApiException ? error.code : undefined);

/** Who writes the Lease, for how long a holder keeps it. */
interface Candidate {
  identity: string;
  leaseDurationSeconds: number;
}

/** Our spec for a Lease we acquire or renew at `at`: a renewal keeps the acquire time and transition count. */
export function leaseSpec(
  { identity, leaseDurationSeconds }: Candidate,
  previous: k8s.V1LeaseSpec | undefined,
  at: number,
): k8s.V1LeaseSpec {
  const renewing = previous?.holderIdentity === identity;
  return {
    holderIdentity: identity,
    leaseDurationSeconds,
    acquireTime: new k8s.V1MicroTime(renewing && previous.acquireTime ? previous.acquireTime : at),
    renewTime: new k8s.V1MicroTime(at),
    leaseTransitions: (previous?.leaseTransitions ?? 0) + (renewing ? 0 : 1),
  };
}

/** What one round does with the Lease it read: wait for its holder, or write it as ours. */
export type LeaseStep =
  | { write: false }
  | { write: true; held: 'renewed' | 'acquired'; lease: k8s.V1Lease; previousHolder?: string };

/**
 * The decision of one round, given the Lease read at `at` and when its current version was first seen here: someone
 * else's Lease is taken only once it went unchanged for its whole duration.
 */
export function planLeaseStep(candidate: Candidate, current: k8s.V1Lease, seenAt: number, at: number): LeaseStep {
  const holder = current.spec?.holderIdentity;
  const durationMs = (current.spec?.leaseDurationSeconds ?? candidate.leaseDurationSeconds) * 1000;
  const someoneElse = !!holder && holder !== candidate.identity;
  if (someoneElse && at - seenAt < durationMs) return { write: false };
  return {
    write: true,
    held: holder === candidate.identity ? 'renewed' : 'acquired',
    lease: { ...current, spec: leaseSpec(candidate, current.spec, at) },
    ...(someoneElse ? { previousHolder: holder } : {}),
  };
}

/** The Lease with no holder, so the others acquire at their next try instead of waiting out the duration. */
export const releasedLease = (current: k8s.V1Lease, at: number): k8s.V1Lease => ({
  ...current,
  spec: { ...current.spec, holderIdentity: undefined, leaseDurationSeconds: 1, renewTime: new k8s.V1MicroTime(at) },
});

/** `held` once `write` succeeds; false when another candidate wrote first (a conflict). */
async function unlessConflict<T>(write: () => Promise<unknown>, held: T): Promise<T | false> {
  try {
    await write();
    return held;
  } catch (error) {
    if (statusOf(error) === 409) return false;
    throw error;
  }
}

/** The Lease, or undefined when there is none yet. */
async function readLease(api: LeaseApi, name: string, namespace: string): Promise<k8s.V1Lease | undefined> {
  try {
    return await api.readNamespacedLease({ name, namespace });
  } catch (error) {
    if (statusOf(error) !== 404) throw error;
    return undefined;
  }
}

/**
 * Leadership as this candidate counts it. A lapse (no renewal within the deadline, e.g. a renewal slowed by a busy
 * machine) is a loss of leadership even when the next renewal succeeds: it is reported the moment anyone sees it, so
 * `onChange` always hears both edges and the starter makes up for what it dropped meanwhile. (Checked only in
 * passing, it dropped observations silently.)
 */
function createLeadership(
  renewDeadlineMs: number,
  now: () => number,
  log: Logger,
  onChange: LeaderElectorOptions['onChange'],
) {
  let leading = false;
  let renewedAt = 0;
  let lastRound: LeaseRound | undefined;
  const set = (value: boolean, why: string, level: 'info' | 'warn' = 'warn', continued = false) => {
    if (value === leading) return;
    leading = value;
    if (value) log.info({ continued }, 'acquired leadership: sending signals');
    else log[level]({ why }, 'lost leadership: no signals until it is acquired again');
    onChange?.(value, value && continued);
  };
  const noticeLapse = () => {
    if (leading && now() - renewedAt >= renewDeadlineMs) set(false, 'could not renew in time');
  };
  return {
    set,
    noticeLapse,
    /** As last set, without looking for a lapse. */
    leading: () => leading,
    isLeader: () => {
      noticeLapse();
      return leading;
    },
    renewed: (at: number) => void (renewedAt = at),
    roundEnded: (leaseKnown: boolean) => void (lastRound = { at: now(), leaseKnown }),
    lastRound: () => lastRound,
  };
}

/**
 * Leader election on a `coordination.k8s.io/v1` Lease, the way client-go does it: others measure expiry from when
 * *they* last saw the record change (no trust in clocks across machines), and writes carry the resourceVersion so
 * two candidates never both win. The holder counts itself leader only until `leaseDuration - renewSeconds` after
 * its last successful renewal, which ends before anyone else may take the Lease, even when a renewal hangs.
 */
export function createLeaderElector({
  api,
  identity,
  lease = {},
  logger,
  onChange,
  now = Date.now,
}: LeaderElectorOptions): LeaderElector {
  const { name, namespace, leaseDurationSeconds, renewSeconds } = { ...DEFAULT_LEASE, ...lease };
  if (renewSeconds >= leaseDurationSeconds)
    throw new Error(`renewSeconds (${renewSeconds}) must be below leaseDurationSeconds (${leaseDurationSeconds})`);
  const candidate = { identity, leaseDurationSeconds };
  const log = logger.child({ lease: `${namespace}/${name}`, identity });
  const leadership = createLeadership((leaseDurationSeconds - renewSeconds) * 1000, now, log, onChange);

  let observed: { resourceVersion?: string; at: number } = { at: 0 };
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  /**
   * `renewed` when we hold the Lease after this call and held it before, `acquired` when it was someone else's or
   * nobody's, false when someone else holds it. Throws on API errors.
   */
  async function acquireOrRenew(): Promise<'renewed' | 'acquired' | false> {
    const at = now();
    const current = await readLease(api, name, namespace);
    if (!current) {
      const body = {
        metadata: { name, namespace },
        spec: { ...leaseSpec(candidate, undefined, at), leaseTransitions: 0 },
      };
      return unlessConflict(() => api.createNamespacedLease({ namespace, body }), 'acquired');
    }
    if (current.metadata?.resourceVersion !== observed.resourceVersion)
      observed = { resourceVersion: current.metadata?.resourceVersion, at };
    const step = planLeaseStep(candidate, current, observed.at, at);
    if (!step.write) return false;
    if (step.previousHolder) log.info({ previousHolder: step.previousHolder }, 'lease expired: taking over');
    return unlessConflict(() => api.replaceNamespacedLease({ name, namespace, body: step.lease }), step.held);
  }

  async function tick(): Promise<void> {
    const startedAt = now();
    try {
      const held = await acquireOrRenew();
      if (held) leadership.renewed(startedAt);
      leadership.set(held !== false, 'another starter holds the lease', 'warn', held === 'renewed');
      leadership.roundEnded(true);
    } catch (error) {
      log.warn({ err: error }, 'lease request failed');
      leadership.roundEnded(false);
    }
    leadership.noticeLapse();
  }

  const loop = () => {
    if (stopped) return;
    running = tick().finally(() => {
      running = undefined;
      if (!stopped) timer = setTimeout(loop, renewSeconds * 1000);
    });
  };

  async function release() {
    try {
      const current = await api.readNamespacedLease({ name, namespace });
      if (current.spec?.holderIdentity !== identity) return;
      await api.replaceNamespacedLease({ name, namespace, body: releasedLease(current, now()) });
      log.info('released the lease');
    } catch (error) {
      log.warn({ err: error }, 'could not release the lease; others take over when it expires');
    }
  }

  return {
    start: loop,
    tick,
    isLeader: leadership.isLeader,
    lastRound: leadership.lastRound,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
      if (!leadership.leading()) return;
      leadership.set(false, 'shutting down', 'info');
      await release();
    },
  };
}
