import * as k8s from '@kubernetes/client-node';
import pino from 'pino';
import type { Client } from '@temporalio/client';
import { MIDONET_LIFECYCLES, wakeStuckLifecycles } from '../activities/backend-health';
import {
  CONFIRM_COMMAND,
  describeTrip,
  GO_AHEAD_ANNOTATION,
  type GoAhead,
  type GuardState,
} from '../model/deletion-guard';
import { cleanupSignal } from '../model/messages';
import { annotateDeletionGuard, readDeletionGuard } from '../platform/kubernetes/deletion-guard';

/**
 * The operator's side of the guard against mass deletion (model/deletion-guard.ts): `steward cleanup
 * --confirm-mass-deletion --reason` gives the go-ahead for the hold in force, recorded on the CRD (who, as the API
 * server authenticates them, and why), and wakes every lifecycle stuck meanwhile with a cleanup retry, so the
 * deletions go on now rather than at their next slow retry; `steward status` with no object says what is held.
 */

/** Who the API server takes the kubeconfig's user for (SelfSubjectReview); undefined where it cannot say. */
export async function authenticatedUser(kubeConfig: k8s.KubeConfig): Promise<string | undefined> {
  try {
    const review = await kubeConfig.makeApiClient(k8s.AuthenticationV1Api).createSelfSubjectReview({ body: {} });
    return review.status?.userInfo?.username || undefined;
  } catch {
    return undefined;
  }
}

export interface ConfirmInput {
  kubeConfig: k8s.KubeConfig;
  temporal: Client;
  taskQueue: string;
  reason: string;
  /** Who says so, when the API server cannot tell (`--by`). */
  by: string;
}

/** The go-ahead recorded, and how many held lifecycles were woken. */
export async function confirmMassDeletion({ kubeConfig, temporal, taskQueue, reason, by }: ConfirmInput) {
  const { state, metadata } = await readDeletionGuard(kubeConfig);
  if (!state.held || !state.trip || !metadata) throw new Error(`nothing is held: ${describeGuard(state)}`);
  if (state.trip.cause === 'Unreadable')
    throw new Error(`${describeTrip(state.trip)}: fix or remove the annotation by hand, then confirm`);
  const goAhead: GoAhead = {
    since: state.trip.since,
    by: (await authenticatedUser(kubeConfig)) ?? by,
    reason,
    at: new Date().toISOString(),
  };
  // Guarded by the version read: a hold that changed meanwhile is not confirmed unseen.
  await annotateDeletionGuard(kubeConfig, metadata.resourceVersion, { [GO_AHEAD_ANNOTATION]: JSON.stringify(goAhead) });
  const request = { mode: 'retry' as const, reason: `mass deletion confirmed: ${reason}`, requestedBy: goAhead.by };
  const woken = await wakeStuckLifecycles(temporal, pino({ level: 'silent' }), {
    workflowTypes: MIDONET_LIFECYCLES,
    taskQueues: [taskQueue],
    by: goAhead.by,
    wake: (handle) => handle.signal(cleanupSignal, request),
  });
  return { goAhead, woken };
}

/** The guard as a person reads it. */
export function describeGuard(state: GuardState): string {
  const given = state.goAhead
    ? `last go-ahead by ${state.goAhead.by} at ${state.goAhead.at}: ${state.goAhead.reason}`
    : 'no go-ahead given';
  if (state.held && state.trip)
    return `HELD: ${describeTrip(state.trip)}; MidoNet deletions wait, go on with ${CONFIRM_COMMAND} (${given})`;
  if (state.trip) return `not held: ${describeTrip(state.trip)}, let go (${given})`;
  return `not held (${given})`;
}

export async function guardStatus(kubeConfig: k8s.KubeConfig): Promise<GuardState> {
  return (await readDeletionGuard(kubeConfig)).state;
}
