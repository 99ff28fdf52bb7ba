// Request-body building blocks shared by the resource modules, and the mapping of zod issues to the
// server's `violations` (ref §1.2). Unknown fields are dropped, as Jackson does with
// FAIL_ON_UNKNOWN_PROPERTIES=false; null counts as absent.
import { z } from 'zod';
import { badRequest, invalid } from './errors';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const IPV4_RE = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const MAC_RE = /^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/i;

/** Java prints UUIDs in lower case, so ids are stored that way whatever the client sent. */
export const uuid = z
  .string()
  .regex(UUID_RE, 'must be a UUID')
  .transform((s) => s.toLowerCase());
export const ipv4 = z.string().regex(IPV4_RE, 'must be an IPv4 address');
export const mac = z
  .string()
  .regex(MAC_RE, 'must be a MAC address like aa:bb:cc:dd:ee:ff')
  .transform((s) => s.toLowerCase());
export const prefixLength = z.number().int().min(0).max(32);
export const uuidList = z.array(uuid).nullish();

export const isUuid = (s: string): boolean => UUID_RE.test(s);
export const isIpv4 = (s: string): boolean => IPV4_RE.test(s);
export const isMac = (s: string): boolean => MAC_RE.test(s);

/** `a.b.c.d/n` or an IPv6 `addr/n`. */
export const cidr = z.string().refine((s) => {
  const [addr, len, extra] = s.split('/');
  if (addr === undefined || len === undefined || extra !== undefined || !/^\d+$/.test(len)) return false;
  return isIpv4(addr) ? Number(len) <= 32 : addr.includes(':') && Number(len) <= 128;
}, 'must be a CIDR like 10.0.0.1/24');

export function parseJson(text: unknown): unknown {
  if (typeof text !== 'string' || text.trim() === '') throw badRequest('No content to map due to end-of-input');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw badRequest(`Invalid JSON: ${(err as Error).message}`);
  }
}

export function validate<T>(schema: z.ZodType<T>, raw: unknown): T {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw badRequest('Expected a JSON object');
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  throw invalid(result.error.issues.map((issue) => ({ property: issue.path.join('.'), message: issue.message })));
}
