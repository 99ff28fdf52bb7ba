/**
 * The MidoNet client and its activities. `createMidonetClient` talks to the v5 REST API (login and token, vendor
 * media types, paths under parents) and offers idempotent ensure / remove / observe for every kind a Translation
 * can hold, and lists a tenant's bridges, routers and chains for the sweeper; `createMidonetActivities` wraps it for
 * Temporal. Kinds are data (kinds.ts); failures carry one vocabulary of reasons (errors.ts) that says which ones
 * Temporal may retry.
 */
export {
  createMidonetActivities,
  type MidonetActivities,
  type MidonetActivityDeps,
  type ResourceInput,
} from './activities';
export {
  backendResource,
  createMidonetClient,
  identify,
  type EnsureResult,
  type MidonetClient,
  type MidonetObservation,
  type RemoveResult,
  type TenantResource,
} from './client';
export type { FieldDiff } from './compare';
export { midonetFailures, type MidonetFailureDetails, type MidonetFailureType } from './errors';
export type { MidonetConnection } from './http';
export type { DeleteResourcesInput, DeleteResourcesResult, TenantInput } from './inventory';
export { kinds, tenantKinds, type MidonetBody, type MidonetHost, type TenantKind } from './kinds';
export { createPushActivities, type DeleteInput, type PushActivities, type PushInput, type PushResult } from './push';
