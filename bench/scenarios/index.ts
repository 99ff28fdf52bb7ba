// The scenarios by name, their sizes (default and smoke), and one scenario run on a running stack: what the CLI, the
// profiles run and the smoke test share.
import type { StackInfo } from '../../deploy/local';
import { runObjectsScenario } from '../objects';
import type { Report } from '../report';
import { burst } from './burst';
import { churn } from './churn';
import { peerPods } from './peerpods';

export const SCENARIOS = ['burst', 'churn', 'peerpods'] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

export interface Sizes {
  pods: number;
  nodes: number;
  rate: number;
  duration: number;
  /** The worker's sticky cache (burst, churn); its default when absent. */
  cache?: number;
  /** Steward worker processes (burst, churn); 1 when absent. */
  workers?: number;
  /** Each worker's STEWARD_HEAP_GROWTH_PERCENT (burst, churn); its default when absent. */
  heapGrowth?: number;
  /** burst: each worker's heap snapshots at the peak, in the report. */
  heapSnapshot?: boolean;
}

export const DEFAULT_SIZES: Record<ScenarioName, Partial<Sizes>> = {
  burst: { pods: 200, nodes: 4 },
  churn: { pods: 50, nodes: 4, rate: 20, duration: 300 },
  peerpods: { pods: 20 },
};
export const SMOKE_SIZES: Record<ScenarioName, Partial<Sizes>> = {
  burst: { pods: 20, nodes: 2 },
  churn: { pods: 20, nodes: 2, rate: 5, duration: 3 },
  peerpods: { pods: 20 },
};

/** One scenario at these sizes (defaults filled in) on a running stack. */
export function runScenario(info: StackInfo, name: ScenarioName, sizes: Partial<Sizes> = {}): Promise<Report> {
  const s = { ...DEFAULT_SIZES[name], ...sizes } as Sizes;
  switch (name) {
    case 'burst':
      return runObjectsScenario(info, burst(s), {
        maxCachedWorkflows: s.cache,
        workers: s.workers,
        heapGrowthPercent: s.heapGrowth,
        heapSnapshots: s.heapSnapshot,
      });
    case 'churn':
      return runObjectsScenario(info, churn(s), {
        maxCachedWorkflows: s.cache,
        workers: s.workers,
        heapGrowthPercent: s.heapGrowth,
      });
    case 'peerpods':
      return peerPods(info, s);
  }
}
