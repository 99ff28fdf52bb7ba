import {
  ActivityFailure,
  ApplicationFailure,
  metricMeter,
  setCurrentDetails,
  setHandler,
  sleep,
} from '@temporalio/workflow';
import { kubernetes, sweepCalls } from './activities';
import { sweepProgressQuery } from '../model/messages';
import {
  emptyCounts,
  renderDetails,
  SWEEP_BACKENDS,
  CAA_LEAK_MODES,
  type BackendReport,
  type CaaLeakMode,
  type ReportRow,
  type SweepBackend,
  type SweepProgress,
  type SweepReport,
  type SweptResource,
} from '../model/sweep-report';
import { DEFAULT_TENANT, globalIds } from '../model/translation/ids';
import type { VmToCheck } from '../activities/kubernetes/inventory';

/**
 * The orphan sweeper (`gc/sweep`, started by a Schedule or by `steward sweep`). It lists what Steward made in each
 * backend (VMs with Steward's marker; the routers, bridges and chains of Steward's MidoNet tenant), keeps what a
 * record claims (a PeerPod or a live Pod for a VM; a Translation for a MidoNet object), waits a grace period, checks
 * the rest again and deletes what is still unclaimed. The grace period covers what is being made right now: a VM
 * whose PeerPod is not written yet, a resource whose Translation is being applied. A backend that fails is reported
 * and the others are still swept; the sweep then fails with the report in its details.
 */
export interface SweepInput {
  /** How long a resource must stay unrecorded before it is deleted (default 10 minutes). */
  graceMs?: number;
  /** Report what would be deleted, delete nothing. */
  dryRun?: boolean;
  /** Which backends to sweep (default both): leave out one the workers are not configured for. */
  backends?: SweepBackend[];
  /** Steward's MidoNet tenant (default `midonetkube`): the only one swept. */
  tenant?: string;
  /**
   * cloud-api-adaptor's VMs that no PeerPod or Pod records (with the cloud backend): `report` or `delete` them.
   * Absent is `off`, so a sweep started before this existed replays as it ran.
   */
  caaLeaks?: CaaLeakMode;
}

export const DEFAULT_GRACE_MS = 10 * 60_000;
/** VM deletes in flight at once: each is one activity, so a slow VM holds no others back. */
const VM_DELETE_CONCURRENCY = 4;
/** MidoNet resources deleted per activity: one history entry per batch, not per resource. */
const MIDONET_BATCH = 25;

/** How one backend is listed, checked against its records and swept. */
interface Backend {
  name: ReportRow;
  scope: string;
  /** Its orphans are reported, never deleted. */
  reportOnly?: boolean;
  /** Everything there, and the ones never to be swept whatever the records say (with why). */
  list(): Promise<{ resources: SweptResource[]; protectedIds: Set<string>; note?: string }>;
  /** The ids of `resources` that nothing records now. */
  unrecorded(resources: SweptResource[]): Promise<Set<string>>;
  /** Deletes them; `progress` is told how many are done after each step. */
  remove(resources: SweptResource[], progress: (done: number) => void): Promise<void>;
}

const cloudBackend: Backend = {
  name: 'cloud',
  scope: "VMs with Steward's marker",
  async list() {
    const { instances } = await sweepCalls.cloudListVms.executeWithOptions(
      { summary: "list the VMs with Steward's marker" },
      [{}],
    );
    const resources = instances.map((vm) => ({
      kind: 'VM',
      id: vm.instanceId,
      ...(vm.name ? { name: vm.name } : {}),
      podUid: vm.podUid,
      ...(vm.podNamespace && vm.podName ? { pod: `${vm.podNamespace}/${vm.podName}` } : {}),
    }));
    return { resources, protectedIds: new Set<string>() };
  },
  unrecorded: (resources) => unrecordedVms(resources.map((r) => ({ instanceId: r.id, podUid: r.podUid ?? '' }))),
  remove: removeVms,
};

async function unrecordedVms(vms: VmToCheck[]): Promise<Set<string>> {
  const { unrecorded } = await kubernetes.findUnrecordedVms.executeWithOptions(
    { summary: `check ${vms.length} VMs against the PeerPods and Pods` },
    [{ vms }],
  );
  return new Set(unrecorded);
}

async function removeVms(resources: SweptResource[], progress: (done: number) => void): Promise<void> {
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < resources.length) {
      const vm = resources[next++] as SweptResource;
      await sweepCalls.cloudDeleteVm.executeWithOptions({ summary: `delete orphan VM ${vm.name ?? ''} ${vm.id}` }, [
        { instanceId: vm.id },
      ]);
      progress(++done);
    }
  };
  await Promise.all(Array.from({ length: Math.min(VM_DELETE_CONCURRENCY, resources.length) }, worker));
}

/**
 * cloud-api-adaptor's VMs that nothing records: made, but never written to a PeerPod (cloud-api-adaptor stopped
 * between the two, its issue #1362). Only names of its exact shape, without any Steward marker, are listed; one is
 * kept while a PeerPod has its instance id or a Pod or PeerPod's pod has its name (inventory.ts), and, as every
 * orphan, only one unrecorded through the whole grace period is ever deleted, and only when the operator says so.
 */
function caaLeaksBackend(reportOnly: boolean): Backend {
  return {
    name: 'cloud-api-adaptor',
    scope: "VMs named as cloud-api-adaptor names them, without Steward's marker",
    reportOnly,
    async list() {
      const { instances } = await sweepCalls.cloudListUpstreamVms.executeWithOptions(
        { summary: "list cloud-api-adaptor's VMs (podvm-<pod>-<8 hex>, no marker)" },
        [{}],
      );
      const resources = instances.map((vm) => ({ kind: 'VM', id: vm.instanceId, name: vm.name }));
      return { resources, protectedIds: new Set<string>() };
    },
    unrecorded: (resources) => unrecordedVms(resources.map((r) => ({ instanceId: r.id, name: r.name ?? '' }))),
    remove: removeVms,
  };
}

/** Routers and bridges before chains: a chain's deletion then has no filter references left to clear. */
const deleteOrder: Record<string, number> = { Router: 0, Bridge: 1, Chain: 2 };

function midonetBackend(tenant: string): Backend {
  // The deployer's, not Steward's (seed 001): a global Translation lists it, but it is never swept even without one.
  const clusterRouter = globalIds(tenant).clusterRouter;
  return {
    name: 'midonet',
    scope: `MidoNet tenant ${tenant}`,
    async list() {
      const { resources } = await sweepCalls.midonetListTenantResources.executeWithOptions(
        { summary: `list the routers, bridges and chains of tenant ${tenant}` },
        [{ tenant }],
      );
      const hasRouter = resources.some((r) => r.id === clusterRouter);
      return {
        resources,
        protectedIds: new Set([clusterRouter]),
        note: hasRouter ? 'the cluster router is never swept' : undefined,
      };
    },
    async unrecorded(resources) {
      const ids = resources.map((r) => r.id);
      const { unrecorded, translations } = await kubernetes.findUnrecordedMidonetIds.executeWithOptions(
        { summary: `check ${ids.length} MidoNet ids against the Translations` },
        [{ ids }],
      );
      // No Translation at all, not even the global ones: the cluster is not set up (or not this MidoNet's), and
      // everything would look orphaned. Refuse rather than empty the tenant.
      if (translations === 0 && ids.length > 0) {
        throw ApplicationFailure.nonRetryable(
          `no Translations at all in the cluster, so every object of tenant ${tenant} looks orphaned: not swept (has the global setup run?)`,
          'SweepRefused',
        );
      }
      return new Set(unrecorded);
    },
    async remove(resources, progress) {
      const ordered = [...resources].sort((a, b) => (deleteOrder[a.kind] ?? 3) - (deleteOrder[b.kind] ?? 3));
      for (let start = 0; start < ordered.length; start += MIDONET_BATCH) {
        const batch = ordered.slice(start, start + MIDONET_BATCH);
        const names = batch.map((r) => `${r.kind} ${r.name ?? r.id}`).join(', ');
        await sweepCalls.midonetDeleteResources.executeWithOptions(
          { summary: `delete ${batch.length} orphan MidoNet resources: ${names}`.slice(0, 200) },
          [{ resources: batch.map((r) => ({ kind: r.kind as 'Router' | 'Bridge' | 'Chain', id: r.id })) }],
        );
        progress(start + batch.length);
      }
    },
  };
}

/** Why a backend could not be swept, in words an operator acts on. */
function explain(row: ReportRow, error: ActivityFailure | ApplicationFailure): string {
  const cause = error instanceof ActivityFailure ? error.cause : error;
  const backend: SweepBackend = row === 'midonet' ? 'midonet' : 'cloud';
  if (error instanceof ActivityFailure && cause instanceof ApplicationFailure && cause.type === 'NotFoundError') {
    const how =
      backend === 'cloud' ? 'a cloud provider (STEWARD_CLOUD_PROVIDER and its settings)' : 'MidoNet (MIDONET_API_URL)';
    return `the worker has no ${backend} activities (${error.activityType} is not registered): configure ${how} on the workers, or leave ${backend} out of the sweep`;
  }
  const type = cause instanceof ApplicationFailure && cause.type ? `${cause.type}: ` : '';
  return `${type}${cause?.message ?? error.message}`;
}

/** Per-backend gauges and counters, tagged with the backend (the SDK emits them once, never again on replay). */
function recordMetrics(report: BackendReport, dryRun: boolean): void {
  const meter = metricMeter.withTags({ backend: report.backend });
  meter
    .createGauge(
      'steward_sweep_resources',
      'int',
      '',
      'Backend resources the last sweep listed (VMs with the marker, tenant objects)',
    )
    .set(report.counts.found);
  meter
    .createGauge('steward_sweep_orphans_found', 'int', '', 'Orphans the last sweep found after its grace period')
    .set(report.counts.orphans);
  meter.createCounter('steward_sweep_orphans_deleted', '', 'Orphans deleted by sweeps').add(report.counts.deleted);
  meter
    .createCounter('steward_sweep_runs', '', 'Sweeps by outcome (swept, dryRun, failed)')
    .withTags({ outcome: report.outcome, dry_run: String(dryRun) })
    .add(1);
  if (report.backend === 'cloud-api-adaptor' && report.outcome !== 'failed') {
    metricMeter
      .createGauge(
        'steward_cloud_unrecorded_vms',
        'int',
        '',
        "cloud-api-adaptor's VMs that no PeerPod or Pod recorded through the last sweep's grace period",
      )
      .set(report.counts.orphans);
  }
}

function checkInput(input: SweepInput): Required<SweepInput> {
  const {
    graceMs = DEFAULT_GRACE_MS,
    dryRun = false,
    backends = [...SWEEP_BACKENDS],
    tenant = DEFAULT_TENANT,
    caaLeaks = 'off',
  } = input;
  const problems = [
    ...(Number.isInteger(graceMs) && graceMs >= 0
      ? []
      : [`graceMs must be a whole number of milliseconds, at least 0 (got ${graceMs})`]),
    ...(backends.length > 0 ? [] : ['backends must name at least one backend']),
    ...backends
      .filter((b) => !SWEEP_BACKENDS.includes(b))
      .map((b) => `unknown backend "${b}": expected ${SWEEP_BACKENDS.join(' or ')}`),
    ...(tenant ? [] : ['tenant must not be empty']),
    ...(CAA_LEAK_MODES.includes(caaLeaks) ? [] : [`caaLeaks must be ${CAA_LEAK_MODES.join(', ')} (got "${caaLeaks}")`]),
  ];
  if (problems.length) throw ApplicationFailure.nonRetryable(problems.join('; '), 'InvalidRequest');
  return { graceMs, dryRun, backends: [...new Set(backends)], tenant, caaLeaks };
}

/** The backends to sweep, cloud-api-adaptor's VMs after the cloud when asked for (they need its activities). */
function backendsOf({ backends, tenant, caaLeaks }: Required<SweepInput>): Backend[] {
  const chosen = backends.map((name) => (name === 'cloud' ? cloudBackend : midonetBackend(tenant)));
  const leaks = backends.includes('cloud') && caaLeaks !== 'off' ? [caaLeaksBackend(caaLeaks === 'report')] : [];
  return [...chosen, ...leaks];
}

export async function sweep(input: SweepInput = {}): Promise<SweepReport> {
  const checked = checkInput(input);
  const { graceMs, dryRun } = checked;
  const backends = backendsOf(checked);
  const run = startSweep(backends, {
    dryRun,
    graceMs,
    backends: backends.map((b) => ({
      backend: b.name,
      scope: b.scope,
      outcome: dryRun || b.reportOnly ? 'dryRun' : 'swept',
      counts: emptyCounts(),
      orphans: [],
    })),
  });
  const candidates = await findCandidates(run);
  if (candidates.some((c) => c.length > 0)) await keepWhatIsClaimedAfterGrace(run, candidates, graceMs);
  if (!dryRun) await deleteOrphans(run);
  run.show({ phase: 'done', total: 0, done: 0 });
  return reportOutcome(run.report, dryRun);
}

/** A sweep under way: its backends, the report it fills in, and its progress (the query and the current details). */
interface SweepRun {
  backends: Backend[];
  report: SweepReport;
  show: (next: Partial<SweepProgress>) => void;
  /** Runs one backend's step; a backend that failed before is skipped, a failure is recorded in its row. */
  step: (index: number, run: BackendStep) => Promise<void>;
  /** Runs a step on every backend at once, each one done counted in the progress. */
  eachBackend: (run: BackendStep) => Promise<void>;
}
type BackendStep = (backend: Backend, row: BackendReport) => Promise<void>;

function startSweep(backends: Backend[], report: SweepReport): SweepRun {
  let progress: SweepProgress = { phase: 'listing', total: backends.length, done: 0 };
  setHandler(sweepProgressQuery, () => progress);
  const show = (next: Partial<SweepProgress>) => {
    progress = { ...progress, ...next };
    setCurrentDetails(renderDetails(report, progress));
  };
  show({});
  const step: SweepRun['step'] = async (index, run) => {
    const backend = backends[index] as Backend;
    const row = report.backends[index] as BackendReport;
    if (row.outcome === 'failed') return;
    try {
      await run(backend, row);
    } catch (error) {
      if (!(error instanceof ActivityFailure || error instanceof ApplicationFailure)) throw error;
      row.outcome = 'failed';
      row.message = explain(backend.name, error);
    }
  };
  const eachBackend: SweepRun['eachBackend'] = async (run) => {
    await Promise.all(backends.map((_, i) => step(i, run).then(() => show({ done: progress.done + 1 }))));
  };
  return { backends, report, show, step, eachBackend };
}

/** 1. What is there, and what no record claims now: the candidates of each backend. */
async function findCandidates({ backends, eachBackend }: SweepRun): Promise<SweptResource[][]> {
  const candidates: SweptResource[][] = backends.map(() => []);
  await eachBackend(async (backend, row) => {
    const { resources, protectedIds, note } = await backend.list();
    row.counts.found = resources.length;
    if (note) row.message = note;
    const sweepable = resources.filter((r) => !protectedIds.has(r.id));
    row.counts.kept = resources.length - sweepable.length;
    const unrecorded = sweepable.length ? await backend.unrecorded(sweepable) : new Set<string>();
    candidates[backends.indexOf(backend)] = sweepable.filter((r) => unrecorded.has(r.id));
    row.counts.candidates = unrecorded.size;
  });
  return candidates;
}

/** 2. The grace period, then the candidates checked again: what a record claimed meanwhile is kept. */
async function keepWhatIsClaimedAfterGrace(
  { backends, show, eachBackend }: SweepRun,
  candidates: SweptResource[][],
  graceMs: number,
): Promise<void> {
  show({
    phase: 'waiting',
    total: Math.ceil(graceMs / 1000),
    done: 0,
    waitUntil: new Date(Date.now() + graceMs).toISOString(),
  });
  if (graceMs > 0) await sleep(graceMs, { summary: 'sweepGrace' });
  show({ phase: 'checking', total: backends.length, done: 0, waitUntil: undefined });
  await eachBackend(async (backend, row) => {
    const mine = candidates[backends.indexOf(backend)] ?? [];
    const still = mine.length ? await backend.unrecorded(mine) : new Set<string>();
    row.orphans = mine.filter((r) => still.has(r.id));
    row.counts.orphans = row.orphans.length;
    row.counts.kept += mine.length - row.orphans.length;
  });
}

/** 3. The orphans deleted (idempotently: one already gone counts as deleted). */
async function deleteOrphans({ backends, report, show, step }: SweepRun): Promise<void> {
  const orphanCounts = report.backends.map((row, i) =>
    row.outcome === 'failed' || backends[i]?.reportOnly ? 0 : row.orphans.length,
  );
  show({ phase: 'deleting', total: orphanCounts.reduce((a, b) => a + b, 0), done: 0 });
  const doneBy = orphanCounts.map(() => 0);
  await Promise.all(
    backends.map((_, i) =>
      step(i, async (backend, row) => {
        if (backend.reportOnly) return;
        await backend.remove(row.orphans, (done) => {
          doneBy[i] = done;
          row.counts.deleted = done;
          show({ done: doneBy.reduce((a, b) => a + b, 0) });
        });
      }),
    ),
  );
}

/** The metrics of each backend; the report, or a failure that carries it when a backend could not be swept. */
function reportOutcome(report: SweepReport, dryRun: boolean): SweepReport {
  report.backends.forEach((row) => recordMetrics(row, dryRun));
  const failed = report.backends.filter((row) => row.outcome === 'failed');
  if (failed.length) {
    throw ApplicationFailure.create({
      type: 'SweepIncomplete',
      nonRetryable: true,
      message: failed.map((row) => `${row.backend}: ${row.message}`).join('; '),
      details: [report],
    });
  }
  return report;
}
