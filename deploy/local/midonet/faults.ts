// Fault injection for API traffic (never the admin endpoint). Faults are checked in the order they were
// added: every matching latency fault adds its delay, the first matching error, drop or misdirect decides the outcome.
// Deterministic: `rate` draws from a PRNG seeded per fault (rate 1 always fires, 0 never), and `times`
// retires a fault after exactly that many firings.
import { z } from 'zod';

export const faultSpecSchema = z.object({
  /** HTTP method, or `*`. */
  method: z.string().default('*'),
  /** Glob on the path below /midonet-api (query excluded): `*` is one segment, `**` any run of segments. */
  path: z
    .string()
    .refine((p) => p.startsWith('/'), 'must start with /')
    .default('/**'),
  /**
   * `error`: answer `status`; `drop`: destroy the socket with no response; `latency`: only delay; `misdirect`: carry
   * the request out but answer about another resource of its kind (misdirect.ts).
   */
  action: z.enum(['error', 'drop', 'latency', 'misdirect']),
  status: z.number().int().min(400).max(599).default(503),
  message: z.string().optional(),
  /** Delay before the outcome, for any action. */
  latencyMs: z.number().int().min(0).max(600_000).default(0),
  rate: z.number().min(0).max(1).default(1),
  /** Fire exactly this many times, then retire ("fail the next N calls"). */
  times: z.number().int().min(1).optional(),
  seed: z.number().int().default(1),
});
export type FaultSpec = z.input<typeof faultSpecSchema>;

export interface FaultInfo extends z.output<typeof faultSpecSchema> {
  id: string;
  /** How many requests this fault has acted on. */
  fired: number;
  /** Firings left when `times` was given, else null. */
  remaining: number | null;
}

export const downSchema = z.object({
  down: z.boolean(),
  /** `unavailable`: every API call gets 503 with an Error body; `drop`: the socket is destroyed unanswered. */
  mode: z.enum(['unavailable', 'drop']).default('unavailable'),
});
export type DownState = z.output<typeof downSchema>;

export type Outcome =
  | { kind: 'pass'; delayMs: number }
  | { kind: 'error'; delayMs: number; status: number; message: string }
  | { kind: 'drop'; delayMs: number }
  | { kind: 'misdirect'; delayMs: number };

/** mulberry32: small, seedable, good enough to spread failures (and the chaos run's choices). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function globToRegExp(glob: string): RegExp {
  const source = glob
    .split(/(\*\*|\*)/)
    .map((part) => (part === '**' ? '.*' : part === '*' ? '[^/]*' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`);
}

interface Fault {
  info: FaultInfo;
  pattern: RegExp;
  random: () => number;
}

export class Faults {
  private faults: Fault[] = [];
  private nextId = 1;
  down: DownState = { down: false, mode: 'unavailable' };

  add(spec: FaultSpec): FaultInfo {
    const parsed = faultSpecSchema.parse(spec);
    const info: FaultInfo = { ...parsed, id: String(this.nextId++), fired: 0, remaining: parsed.times ?? null };
    this.faults.push({ info, pattern: globToRegExp(parsed.path), random: prng(parsed.seed) });
    return info;
  }

  remove(id: string): boolean {
    const before = this.faults.length;
    this.faults = this.faults.filter((f) => f.info.id !== id);
    return this.faults.length < before;
  }

  clear(): void {
    this.faults = [];
  }

  list(): FaultInfo[] {
    return this.faults.map((f) => ({ ...f.info }));
  }

  /** What to do with an API request; `path` is below /midonet-api, without the query. */
  decide(method: string, path: string): Outcome {
    if (this.down.down) {
      return this.down.mode === 'drop'
        ? { kind: 'drop', delayMs: 0 }
        : { kind: 'error', delayMs: 0, status: 503, message: 'MidoNet API unavailable (emulated backend down)' };
    }
    let delayMs = 0;
    for (const fault of [...this.faults]) {
      const { info } = fault;
      if (info.method !== '*' && info.method.toUpperCase() !== method.toUpperCase()) continue;
      if (!fault.pattern.test(path)) continue;
      if (!(fault.random() < info.rate)) continue;
      info.fired += 1;
      if (info.remaining !== null) {
        info.remaining -= 1;
        if (info.remaining === 0) this.remove(info.id);
      }
      delayMs += info.latencyMs;
      if (info.action === 'drop' || info.action === 'misdirect') return { kind: info.action, delayMs };
      if (info.action === 'error') {
        return { kind: 'error', delayMs, status: info.status, message: info.message ?? `Injected fault ${info.id}` };
      }
    }
    return { kind: 'pass', delayMs };
  }
}
