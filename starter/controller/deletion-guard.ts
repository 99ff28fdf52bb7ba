import * as k8s from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import {
  DEFAULT_WAVE,
  HOLD_ANNOTATION,
  heldMessage,
  TRANSLATION_CRD,
  waveOf,
  type GuardState,
  type WaveHold,
  type WaveSettings,
} from '../../model/deletion-guard';
import { Reason } from '../../model/vocabulary';
import { annotateDeletionGuard, readDeletionGuard, watchDeletionGuard } from '../../platform/kubernetes/deletion-guard';
import type { SourceEvent } from '../../platform/kubernetes/informer';

/**
 * The starter's side of the guard against mass deletion (model/deletion-guard.ts). Every starter counts the
 * Translations' deletion timestamps from its informer; the leader trips the guard when a wave is counted (the hold
 * written on the CRD, where the workers see it) and says so once per hold with a Warning Event on the CRD. Every
 * starter exports whether deletions are held (`steward_mass_deletion_held`), which the alert rule reads.
 */
export interface MassDeletionGuardOptions {
  kubeConfig: k8s.KubeConfig;
  settings?: WaveSettings;
  isLeader: () => boolean;
  /** Every Translation the starter knows, those being deleted included. */
  total: () => number;
  registry: Registry;
  log: Logger;
  now?: () => number;
}

export interface MassDeletionGuard {
  /** A source event: a Translation's deletion timestamp counts. */
  observe(event: SourceEvent): void;
  state(): GuardState;
  stop(): Promise<void>;
}

const deletionTime = (object: k8s.KubernetesObject) => {
  const at = object.metadata?.deletionTimestamp;
  return at === undefined ? undefined : new Date(at).getTime();
};

export function createMassDeletionGuard(options: MassDeletionGuardOptions): MassDeletionGuard {
  const { kubeConfig, settings = DEFAULT_WAVE, isLeader, total, log, now = Date.now } = options;
  const deletions = new Map<string, number>();
  let state: GuardState = { held: false };
  let tripping = false;
  let announced: string | undefined;
  const watch = watchDeletionGuard(kubeConfig, log, (next) => {
    state = next;
    announce();
  });
  new Gauge({
    name: 'steward_mass_deletion_held',
    help: 'Whether MidoNet deletions are held by the guard against mass deletion (1) until an operator confirms',
    registers: [options.registry],
    collect() {
      this.set(state.held ? 1 : 0);
    },
  });

  /** Once per hold, from the leader: a Warning Event on the CRD, and the log. */
  function announce() {
    if (!state.held || !state.trip || !isLeader() || announced === state.trip.since) return;
    announced = state.trip.since;
    const message = heldMessage(state.trip);
    log.error({ trip: state.trip }, message);
    void recordWarning(kubeConfig, message).catch((error: unknown) =>
      log.warn({ err: error }, 'the mass-deletion Event could not be recorded'),
    );
  }

  /** Writes the hold, unless the CRD (read now) holds already or another wrote it first. */
  async function trip(wave: Omit<WaveHold, 'since' | 'windowSeconds'>) {
    const { state: current, metadata } = await readDeletionGuard(kubeConfig);
    if (current.held || !metadata) return;
    const hold: WaveHold = { since: new Date(now()).toISOString(), windowSeconds: settings.windowSeconds, ...wave };
    await annotateDeletionGuard(kubeConfig, metadata.resourceVersion, { [HOLD_ANNOTATION]: JSON.stringify(hold) });
  }

  function evaluate() {
    if (tripping || state.held || !isLeader() || !watch.synced()) return;
    const after = state.goAhead ? Date.parse(state.goAhead.at) : undefined;
    const wave = waveOf({ deletions: [...deletions.values()], total: total(), now: now(), after }, settings);
    if (!wave.tripped) return;
    tripping = true;
    trip({ deleting: wave.deleting, total: wave.total })
      .catch((error: unknown) => log.warn({ err: error }, 'the mass-deletion hold could not be written; tried again'))
      .finally(() => (tripping = false));
  }

  return {
    observe({ kind, type, object }) {
      if (kind !== 'Translation') return;
      const uid = object.metadata?.uid ?? '';
      const at = type === 'upsert' ? deletionTime(object) : undefined;
      if (at === undefined) deletions.delete(uid);
      else deletions.set(uid, at);
      if (at !== undefined) evaluate();
      announce();
    },
    state: () => state,
    stop: () => watch.stop(),
  };
}

async function recordWarning(kubeConfig: k8s.KubeConfig, message: string) {
  const crd = (await readDeletionGuard(kubeConfig)).metadata;
  const at = new Date();
  await kubeConfig.makeApiClient(k8s.CoreV1Api).createNamespacedEvent({
    namespace: 'default',
    body: {
      metadata: { generateName: `${TRANSLATION_CRD}.` },
      involvedObject: {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        name: TRANSLATION_CRD,
        ...(crd?.uid ? { uid: crd.uid } : {}),
      },
      type: 'Warning',
      reason: Reason.MassDeletionHeld,
      message: message.slice(0, 1024),
      count: 1,
      firstTimestamp: at,
      lastTimestamp: at,
      source: { component: 'steward-starter' },
    },
  });
}
