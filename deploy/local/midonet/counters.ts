// Request counters for the API (not the admin endpoint): per method, per resource kind and method, per
// response status, and how many requests faults acted on.
export interface CountersSnapshot {
  total: number;
  byMethod: Record<string, number>;
  /** Kind → method → count. Kinds are midonet-kubernetes' names plus Login, PortLink, HostInterfacePort, Application; `unknown` for unmatched paths. */
  byKind: Record<string, Record<string, number>>;
  byStatus: Record<string, number>;
  faults: { errors: number; drops: number; delayed: number; misdirected: number };
}

const empty = (): CountersSnapshot => ({
  total: 0,
  byMethod: {},
  byKind: {},
  byStatus: {},
  faults: { errors: 0, drops: 0, delayed: 0, misdirected: 0 },
});

export class Counters {
  private data = empty();

  request(method: string, kind: string): void {
    this.data.total += 1;
    this.data.byMethod[method] = (this.data.byMethod[method] ?? 0) + 1;
    const perKind = (this.data.byKind[kind] ??= {});
    perKind[method] = (perKind[method] ?? 0) + 1;
  }

  response(status: number): void {
    this.data.byStatus[status] = (this.data.byStatus[status] ?? 0) + 1;
  }

  fault(kind: keyof CountersSnapshot['faults']): void {
    this.data.faults[kind] += 1;
  }

  snapshot(): CountersSnapshot {
    return structuredClone(this.data);
  }

  reset(): void {
    this.data = empty();
  }
}
