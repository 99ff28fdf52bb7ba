// Shapes exchanged with the admin endpoint, shared by admin.ts (server) and admin-client.ts (tests).
import { z } from 'zod';
import type { EmulatorConfig } from './context';
import type { KindName } from './kinds';
import { uuid } from './validation';

export const hostSeedSchema = z.object({
  id: uuid.optional(),
  name: z.string().min(1),
  alive: z.boolean().default(true),
  addresses: z.array(z.string()).default([]),
  interfaces: z
    .array(
      z.object({
        name: z.string().min(1),
        mac: z.string().nullable().default(null),
        mtu: z.number().int().default(1500),
        type: z.string().default('Physical'),
        endpoint: z.string().default('DATAPATH'),
        portType: z.string().nullable().default(null),
        addresses: z.array(z.string()).default([]),
        status: z.number().int().default(3),
      }),
    )
    .default([]),
  floodingProxyWeight: z.number().int().min(0).default(1),
  containerWeight: z.number().int().min(0).default(1),
  containerLimit: z.number().int().min(0).default(0),
  enforceContainerLimit: z.boolean().default(false),
});
/** A host as an agent would register it; the id is generated when absent. */
export type HostSeed = z.input<typeof hostSeedSchema>;

export const configPatchSchema = z.object({
  auth: z.enum(['token', 'mock']).optional(),
  credentials: z.object({ username: z.string(), password: z.string() }).nullable().optional(),
  duplicateTableEntryStatus: z.union([z.literal(409), z.literal(500)]).optional(),
});
export type ConfigPatch = z.input<typeof configPatchSchema>;
export type { EmulatorConfig };

/** `GET /journal`: the writes mentioning `id` (path, affected id or cascaded keys); every write without it. */
export const journalQuerySchema = z.object({ id: uuid.optional() });
export type { JournalEntry } from './journal';

/** Every resource, rendered as GET would return it, per kind; links and bindings listed on their own. */
export type StateDump = Record<KindName | 'PortLink' | 'HostInterfacePort', Record<string, unknown>[]>;
