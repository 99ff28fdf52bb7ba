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
  /** One acquire-or-renew round (the loop's step, exposed for tests). */
  tick(): Promise<void>;
}

export const DEFAULT_LEASE = {
  name: 'steward-starter',
  namespace: 'kube-system',
  leaseDurationSeconds: 15,
  renewSeconds: 5,
} as const;

const statusOf = (error: unknown) => (error instanceof k8s.ApiException ? error.code : undefined);

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
  const renewDeadlineMs = (leaseDurationSeconds - renewSeconds) * 1000;
  const log = logger.child({ lease: `${namespace}/${name}`, identity });

  let leading = false;
  let renewedAt = 0;
  let observed: { resourceVersion?: string; at: number } = { at: 0 };
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  /**
   * A lapse (no renewal within the deadline, e.g. a renewal slowed by a busy machine) is a loss of leadership even
   * when the next renewal succeeds: it is reported the moment anyone sees it, so `onChange` always hears both edges
   * and the starter makes up for what it dropped meanwhile. (Checked only in passing, it dropped observations silently.)
   */
  const noticeLapse = () => {
    if (leading && now() - renewedAt >= renewDeadlineMs) setLeading(false, 'could not renew in time');
  };
  const isLeader = () => {
    noticeLapse();
    return leading;
  };
  const setLeading = (value: boolean, why: string, level: 'info' | 'warn' = 'warn', continued = false) => {
    if (value === leading) return;
    leading = value;
    if (value) log.info({ continued }, 'acquired leadership: sending signals');
    else log[level]({ why }, 'lost leadership: no signals until it is acquired again');
    onChange?.(value, value && continued);
  };
  const spec = (previous: k8s.V1LeaseSpec | undefined, at: number): k8s.V1LeaseSpec => {
    const renewing = previous?.holderIdentity === identity;
    return {
      holderIdentity: identity,
      leaseDurationSeconds,
      acquireTime: new k8s.V1MicroTime(renewing && previous.acquireTime ? previous.acquireTime : at),
      renewTime: new k8s.V1MicroTime(at),
      leaseTransitions: (previous?.leaseTransitions ?? 0) + (renewing ? 0 : 1),
    };
  };

  /**
   * `renewed` when we hold the Lease after this call and held it before, `acquired` when it was someone else's or
   * nobody's, false when someone else holds it. Throws on API errors.
   */
  async function acquireOrRenew(): Promise<'renewed' | 'acquired' | false> {
    const at = now();
    let current: k8s.V1Lease;
    try {
      current = await api.readNamespacedLease({ name, namespace });
    } catch (error) {
      if (statusOf(error) !== 404) throw error;
      try {
        await api.createNamespacedLease({
          namespace,
          body: { metadata: { name, namespace }, spec: { ...spec(undefined, at), leaseTransitions: 0 } },
        });
        return 'acquired';
      } catch (createError) {
        if (statusOf(createError) === 409) return false;
        throw createError;
      }
    }
    const holder = current.spec?.holderIdentity;
    if (current.metadata?.resourceVersion !== observed.resourceVersion)
      observed = { resourceVersion: current.metadata?.resourceVersion, at };
    const durationMs = (current.spec?.leaseDurationSeconds ?? leaseDurationSeconds) * 1000;
    if (holder && holder !== identity && at - observed.at < durationMs) return false;
    if (holder && holder !== identity) log.info({ previousHolder: holder }, 'lease expired: taking over');
    try {
      await api.replaceNamespacedLease({ name, namespace, body: { ...current, spec: spec(current.spec, at) } });
      return holder === identity ? 'renewed' : 'acquired';
    } catch (error) {
      if (statusOf(error) === 409) return false;
      throw error;
    }
  }

  async function tick(): Promise<void> {
    const startedAt = now();
    try {
      const held = await acquireOrRenew();
      if (held) renewedAt = startedAt;
      setLeading(held !== false, 'another starter holds the lease', 'warn', held === 'renewed');
    } catch (error) {
      log.warn({ err: error }, 'lease request failed');
    }
    noticeLapse();
  }

  const loop = () => {
    if (stopped) return;
    running = tick().finally(() => {
      running = undefined;
      if (!stopped) timer = setTimeout(loop, renewSeconds * 1000);
    });
  };

  return {
    start: loop,
    tick,
    isLeader,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
      if (!leading) return;
      setLeading(false, 'shutting down', 'info');
      try {
        const current = await api.readNamespacedLease({ name, namespace });
        if (current.spec?.holderIdentity !== identity) return;
        // An empty holder lets the others acquire at their next try instead of waiting out the duration.
        await api.replaceNamespacedLease({
          name,
          namespace,
          body: {
            ...current,
            spec: {
              ...current.spec,
              holderIdentity: undefined,
              leaseDurationSeconds: 1,
              renewTime: new k8s.V1MicroTime(now()),
            },
          },
        });
        log.info('released the lease');
      } catch (error) {
        log.warn({ err: error }, 'could not release the lease; others take over when it expires');
      }
    },
  };
}
