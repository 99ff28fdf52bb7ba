import { z } from 'zod';

// The schemas of the signals and updates, evaluated once per worker in its shared V8 context (worker/bundle.ts) and
// handed out only through messageSchemas(): the SDK deep-freezes what a preloaded module exports, and a zod schema
// writes into itself when first used (its lazy internals, its memoizer), so the schemas must not be exports. They are
// shared by every workflow, unfrozen: those writes are memoized facts about the schema alone, the same whichever
// workflow makes them first, and a parse keeps nothing of its input. messages.ts exports them under their names.

/**
 * Signals are a trust boundary (anyone with access to the namespace can send one): a payload is checked against
 * these before it reaches a machine, and one that does not fit is logged and dropped, never stored.
 */
const objectRefSchema = z.object({
  kind: z.string().min(1),
  namespace: z.string().min(1).optional(),
  name: z.string().min(1),
});

/** An `observed` payload; each lifecycle gives the schema of its own projection. */
const observationSchema = <P extends z.ZodType>(projection: P) =>
  z.object({
    ref: objectRefSchema,
    uid: z.string().min(1),
    generation: z.number().int().nonnegative(),
    deleting: z.boolean(),
    gone: z.boolean(),
    finalizers: z.array(z.string()),
    projection,
  });

const dependencyChangedSchema = z.object({ dependency: objectRefSchema, uid: z.string().min(1) });
const backendChangedSchema = z.object({ by: z.string().min(1).max(400), ids: z.array(z.string().max(100)).max(20) });

const operatorRequest = {
  reason: z.string().trim().min(1, 'a reason is required'),
  requestedBy: z.string().trim().min(1, 'requestedBy is required'),
};
export const cleanupModes = ['retry', 'orphan', 'force'] as const;
const cleanupRequest = z.object({
  ...operatorRequest,
  mode: z.enum(cleanupModes, { error: `mode must be one of ${cleanupModes.join(', ')}` }),
  /** `orphan` or `force` of an object that is not being deleted ends its lifecycle while it lives: said explicitly. */
  evenIfLive: z.boolean().optional(),
});
const operatorRequestSchema = z.object(operatorRequest);

const schemas = {
  observationSchema,
  dependencyChangedSchema,
  backendChangedSchema,
  cleanupRequest,
  operatorRequestSchema,
};

export const messageSchemas = () => schemas;
