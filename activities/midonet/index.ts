/**
 * The MidoNet client and its activities. `createMidonetClient` talks to the v5 REST API (login and token, vendor
 * media types, paths under parents) and offers idempotent ensure / remove / observe for every kind a Translation
 * can hold; `createMidonetActivities` wraps it for Temporal. Kinds are data (kinds.ts); failures carry one
 * vocabulary of reasons (errors.ts) that says which ones Temporal may retry.
 */
export { createMidonetActivities, type MidonetActivities, type MidonetActivityDeps, type ResourceInput } from './activities';
export { backendResource, createMidonetClient, type BackendResource, type EnsureResult, type MidonetClient, type Observation, type RemoveResult } from './client';
export type { FieldDiff } from './compare';
export { midonetFailures, type MidonetFailureDetails, type MidonetFailureType } from './errors';
export type { MidonetConnection } from './http';
export { kinds, type MidonetBody, type MidonetHost, type MidonetKind } from './kinds';
export { createPushActivities, identify, type DeleteInput, type PushActivities, type PushedResource, type PushInput, type PushResult } from './push';
