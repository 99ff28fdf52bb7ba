// A bridge's MAC table (MACPort) and ARP table (IPv4MACPair) (ref §1.4 MAC/ARP tables). Entries have no id:
// the path key is `{mac-with-dashes}_{portId}` or `{ip}_{mac-with-dashes}`. A duplicate POST is a 500
// upstream (MNA-1315); the admin config can make it the saner 409.
import { z } from 'zod';
import type { EmulatorConfig } from '../context';
import { defineKind, load, type RenderCtx } from '../crud';
import { ApiError, badRequest } from '../errors';
import { itemUri } from '../kinds';
import type { ArpEntryRec, MacEntryRec, PortRec } from '../state';
import { ipv4, isIpv4, isMac, isUuid, mac } from '../validation';

const dashes = (m: string): string => m.replace(/:/g, '-');
const colons = (m: string): string => m.replace(/-/g, ':').toLowerCase();

function duplicate(what: string) {
  return (key: string, config: EmulatorConfig): ApiError =>
    new ApiError(
      config.duplicateTableEntryStatus,
      config.duplicateTableEntryStatus === 500
        ? `${what} ${key} already exists (MNA-1315)`
        : `${what} ${key} already exists.`,
    );
}

const macSchema = z.object({
  macAddr: mac,
  portId: z
    .string()
    .refine(isUuid, 'must be a UUID')
    .transform((s) => s.toLowerCase()),
  vlanId: z.number().int().min(0).max(4095).nullish(),
});
type MacBody = z.infer<typeof macSchema>;

/** `aa-bb-cc-dd-ee-ff_<portId>` → the stored id part, or null. */
function parseMacKey(raw: string): string | null {
  const [m, port, extra] = raw.split('_');
  if (m === undefined || port === undefined || extra !== undefined) return null;
  const macAddr = colons(m);
  return isMac(macAddr) && isUuid(port) ? `${dashes(macAddr)}_${port.toLowerCase()}` : null;
}

export const macEntries = defineKind<MacEntryRec, MacBody>({
  kind: 'MACPort',
  schema: macSchema,
  keyFor: (b, bridgeId) => `${bridgeId}/${dashes(b.macAddr)}_${b.portId}`,
  parseId: parseMacKey,
  duplicate: duplicate('MAC table entry'),
  missing: (key) => new ApiError(404, `There is no MAC table entry ${key}.`),
  create: ({ state, body, parentId }) => {
    const port = load<PortRec>(state, 'Port', body.portId);
    if (port.bridgeId !== parentId) throw badRequest(`Port ${port.id} does not belong to bridge ${parentId}.`);
    return { bridgeId: parentId, macAddr: body.macAddr, portId: body.portId, vlanId: body.vlanId ?? null };
  },
  render: (e: MacEntryRec, { base }: RenderCtx) => ({
    ...e,
    uri: itemUri('MACPort', `${e.bridgeId}/${dashes(e.macAddr)}_${e.portId}`, base),
  }),
});

const arpSchema = z.object({ ip: ipv4, mac });
type ArpBody = z.infer<typeof arpSchema>;

function parseArpKey(raw: string): string | null {
  const [ip, m, extra] = raw.split('_');
  if (ip === undefined || m === undefined || extra !== undefined) return null;
  return isIpv4(ip) && isMac(colons(m)) ? `${ip}_${dashes(colons(m))}` : null;
}

export const arpEntries = defineKind<ArpEntryRec, ArpBody>({
  kind: 'IPv4MACPair',
  schema: arpSchema,
  keyFor: (b, bridgeId) => `${bridgeId}/${b.ip}_${dashes(b.mac)}`,
  parseId: parseArpKey,
  duplicate: duplicate('ARP table entry'),
  missing: (key) => new ApiError(404, `There is no ARP table entry ${key}.`),
  create: ({ body, parentId }) => ({ bridgeId: parentId!, ip: body.ip, mac: body.mac }),
  render: (e: ArpEntryRec, { base }: RenderCtx) => ({
    ...e,
    uri: itemUri('IPv4MACPair', `${e.bridgeId}/${e.ip}_${dashes(e.mac)}`, base),
  }),
});
