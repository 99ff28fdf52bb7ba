import { ActivityCancellationType, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { CloudActivities, PodVmActivities } from '../activities/cloud';
import type { KubernetesActivities } from '../activities/kubernetes';
import type { MidonetActivities } from '../activities/midonet';
import type { PushActivities } from '../activities/midonet/push';
import type { ObjectActivities } from '../activities/object';
import { LOCAL_SYNC_TIMEOUT_MS } from '../model/fence';

type SweepActivities = Pick<CloudActivities, 'cloudListVms' | 'cloudListUpstreamVms' | 'cloudDeleteVm'> &
  Pick<MidonetActivities, 'midonetListTenantResources' | 'midonetDeleteResources'>;

/**
 * The few option presets every workflow calls activities through (activities are imported as types only).
 * Retries are bounded on purpose: when they run out the machine shows `stuck` and keeps retrying slowly, which an
 * operator can see and act on, instead of an activity retrying invisibly forever.
 */
const bounded = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '10 seconds',
  maximumAttempts: 5,
};

/**
 * A whole Translation pushed or deleted in one call: heartbeats after each resource, resumes where it stopped. A push
 * called off (a deletion) is waited for only while an attempt runs: between retries it stops at once, and a running
 * attempt stops at its next heartbeat once what it sent is answered, so nothing of it lands after the deletion.
 */
export const midonet = proxyActivities<PushActivities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '30 seconds',
  retry: bounded,
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
});

/**
 * Quick, idempotent Kubernetes calls as local activities: one marker event instead of three, and no round trip
 * through the server's task queue (ref/performance.md 5b).
 */
export const kubernetes = proxyLocalActivities<KubernetesActivities>({
  startToCloseTimeout: '30 seconds',
  retry: bounded,
});

/**
 * An object's sync (translate, apply, push, report) and finalization, as local activities: one marker each in its
 * history. A push attempt lost with its worker may have writes landing after the workflow moved on: each attempt
 * fences its Translation until they can have landed, and a deletion waits the fence out (model/fence.ts).
 */
export const objectOptions = {
  // Bounds how long a lost attempt can go on writing: the fence's window counts on it.
  startToCloseTimeout: LOCAL_SYNC_TIMEOUT_MS,
  retry: bounded,
};
export const objects = proxyLocalActivities<ObjectActivities>(objectOptions);

/** Single MidoNet calls (observe the cluster router). */
export const midonetCalls = proxyActivities<MidonetActivities>({
  startToCloseTimeout: '30 seconds',
  retry: bounded,
});

/**
 * Cloud VM calls. A create or delete takes a second or two and heartbeats; a worker that dies mid-call is noticed
 * after the heartbeat timeout and the call is retried elsewhere (the provider's create finds the VM an earlier
 * attempt made, by name and tag, so a lost reply never makes a second VM).
 */
export const cloud = proxyActivities<CloudActivities & PodVmActivities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '15 seconds',
  retry: bounded,
});

/**
 * A peer pod's quick cloud calls (is its VM still there, delete it) as local activities: a call or two to the cloud's
 * API, one marker each, run in the workflow task that asks for them. Repeating one is harmless.
 */
export const cloudCalls = proxyLocalActivities<CloudActivities>({
  startToCloseTimeout: '30 seconds',
  retry: bounded,
});

/**
 * The sweeper's cloud and MidoNet calls: listing a whole backend and deleting a batch can take a while, so they
 * heartbeat. A worker without that backend answers NotFoundError (activity not registered): not retried, the sweep
 * says which backend is not configured.
 */
export const sweepCalls = proxyActivities<SweepActivities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '30 seconds',
  retry: { ...bounded, nonRetryableErrorTypes: ['NotFoundError'] },
});
