// Typed client for the admin endpoint, for tests and the embedded stack.
import type { ConfigPatch, EmulatorConfig, HostSeed, JournalEntry, StateDump } from './admin-types';
import type { CountersSnapshot } from './counters';
import type { DownState, FaultInfo, FaultSpec } from './faults';

export class EmulatorAdmin {
  /** `adminUrl` as returned by startMidonetEmulator, e.g. http://127.0.0.1:8181/_emulator */
  constructor(private readonly adminUrl: string) {}

  /** Registers (or replaces) a host as its agent would; returns it as GET /hosts/{id} shows it. */
  seedHost(host: HostSeed): Promise<Record<string, unknown> & { id: string }> {
    return this.call('POST', '/hosts', host);
  }

  /** Removes a host as if its agent were gone: its bindings are cleared and it leaves its tunnel zones. */
  removeHost(id: string): Promise<void> {
    return this.call('DELETE', `/hosts/${id}`);
  }

  /** Back to an empty emulator: no resources, hosts or tokens; faults, down switch, counters and config reset. */
  reset(): Promise<void> {
    return this.call('POST', '/reset');
  }

  dump(): Promise<StateDump> {
    return this.call('GET', '/state');
  }

  counters(): Promise<CountersSnapshot> {
    return this.call('GET', '/counters');
  }

  resetCounters(): Promise<void> {
    return this.call('DELETE', '/counters');
  }

  /** The API writes (oldest first) whose path, affected id or cascaded keys mention `id`; all of them without it. */
  journal(id?: string): Promise<JournalEntry[]> {
    return this.call('GET', id === undefined ? '/journal' : `/journal?id=${encodeURIComponent(id)}`);
  }

  injectFault(spec: FaultSpec): Promise<FaultInfo> {
    return this.call('POST', '/faults', spec);
  }

  faults(): Promise<FaultInfo[]> {
    return this.call('GET', '/faults');
  }

  removeFault(id: string): Promise<void> {
    return this.call('DELETE', `/faults/${id}`);
  }

  clearFaults(): Promise<void> {
    return this.call('DELETE', '/faults');
  }

  /** Backend down: `unavailable` answers 503 to every API call, `drop` destroys each connection unanswered. */
  setDown(down: boolean, mode: DownState['mode'] = 'unavailable'): Promise<DownState> {
    return this.call('PUT', '/down', { down, mode });
  }

  configure(patch: ConfigPatch): Promise<EmulatorConfig> {
    return this.call('PATCH', '/config', patch);
  }

  /** Invalidates every issued token, so the next API call with one gets 401. */
  revokeTokens(): Promise<void> {
    return this.call('POST', '/tokens/revoke');
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(this.adminUrl + path, {
      method,
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`emulator admin ${method} ${path}: ${res.status} ${text}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }
}
