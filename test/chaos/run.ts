// One chaos run: a fresh stack, the seeded operations carried out while faults are injected, then a bounded wait for
// quiescence (every invariant holds, twice in a row) and the invariants' verdict.
import { sleep } from '../../deploy/local/process';
import type { TemporalProfile } from '../../deploy/local/stack';
import { translate, type Translation } from '../../model/translation';
import { TRANSLATION_API } from '../../model/naming';
import { execute } from './execute';
import { FaultInjector, type FaultKind } from './faults';
import {
  checkAll,
  listedKeys,
  subjectOf,
  translationKeys,
  type Snapshot,
  type TranslationObject,
  type Violation,
} from './invariants';
import { journalLines, journalSubjects } from './journal';
import {
  describeOp,
  HAND_WRITTEN_LABEL,
  handWritten,
  NAMESPACE,
  nodeProjection,
  podProjection,
  serviceProjection,
  targetOf,
  type Op,
} from './ops';
import { random } from './prng';
import { takeSnapshot } from './snapshot';
import { workflowStates } from './workflow-states';
import { ChaosStack } from './stack';

export interface RunOptions {
  seed: number;
  ops: Op[];
  faults: FaultKind[];
  peerPods: boolean;
  temporal: TemporalProfile;
  /** Mean pause between operations. */
  opDelayMs: number;
  quiesceMs: number;
  resyncSeconds: number;
  libvirtUri?: string;
  /** Progress lines (the log is also kept in the result). */
  print?: (line: string) => void;
}

export interface RunResult {
  seed: number;
  temporal: TemporalProfile;
  ops: Op[];
  outcomes: Map<number, string>;
  faults: Partial<Record<FaultKind, number>>;
  violations: Violation[];
  /** What the workflows of the objects violated say, and MidoNet's journal of them (also in `log`). */
  diagnosis: string[];
  /** From the end of the faults to the first clean check; undefined when it never came. */
  quiescenceMs?: number;
  durationMs: number;
  log: string[];
}

export async function runChaos(options: RunOptions): Promise<RunResult> {
  const started = Date.now();
  const log: string[] = [];
  const stamp = (line: string) => {
    const text = `${((Date.now() - started) / 1000).toFixed(1).padStart(6)}s ${line}`;
    log.push(text);
    options.print?.(text);
  };
  const stack = await ChaosStack.start({
    peerPods: options.peerPods,
    temporal: options.temporal,
    resyncSeconds: options.resyncSeconds,
    ...(options.libvirtUri ? { libvirtUri: options.libvirtUri } : {}),
    log: stamp,
  });
  stamp(
    `stack up (${stack.info.stateDir}), Temporal ${options.temporal} profile, ${options.ops.length} operations, faults: ${options.faults.join(', ') || 'none'}`,
  );
  // Should this process die without stopping the stack, these are the processes to stop by hand.
  stamp(
    `pids: ${Object.entries(stack.pids())
      .map(([name, pid]) => `${name} ${pid}`)
      .join(', ')}`,
  );
  const attribution = attributionOf(options.ops, stack.tenant);
  const outcomes = new Map<number, string>();
  const injector = new FaultInjector(stack, options.faults, options.seed, stamp);
  try {
    injector.start();
    const pause = random(options.seed ^ 0xde1a);
    let lastAttribution = 0;
    for (const op of options.ops) {
      const outcome = await execute({ core: stack.core, custom: stack.custom, tenant: stack.tenant }, op);
      outcomes.set(op.index, outcome);
      stamp(`${describeOp(op)} → ${outcome}`);
      if (Date.now() - lastAttribution > 10_000) {
        await recordTranslations(stack, attribution).catch(() => undefined);
        lastAttribution = Date.now();
      }
      await sleep(pause.int(0, 2 * options.opDelayMs));
    }
    stamp('last operation done; stopping the faults, healing');
    await injector.stop();
    const quietFrom = Date.now();
    stamp('waiting for quiescence');
    let violations: Violation[] = [];
    let snapshot: Snapshot | undefined;
    let clean = 0;
    let quiescenceMs: number | undefined;
    for (;;) {
      await recordTranslations(stack, attribution).catch(() => undefined);
      const finished = await stack.finishTerminatingPods(NAMESPACE).catch(() => []);
      if (finished.length) stamp(`as a kubelet would: deleted again the terminating Pods ${finished.join(', ')}`);
      try {
        snapshot = await takeSnapshot(stack);
      } catch (error) {
        stamp(`snapshot failed: ${(error as Error).message.split('\n')[0]}`);
        if (Date.now() - quietFrom > options.quiesceMs) throw error;
        await sleep(5_000);
        continue;
      }
      violations = checkAll(snapshot, attribution);
      if (violations.length === 0) {
        quiescenceMs ??= Date.now() - quietFrom;
        if (++clean >= 2) break;
      } else {
        clean = 0;
        quiescenceMs = undefined;
        const byInvariant = new Map<string, number>();
        for (const v of violations) byInvariant.set(v.invariant, (byInvariant.get(v.invariant) ?? 0) + 1);
        stamp(
          `not yet: ${[...byInvariant].map(([k, n]) => `${k} ${n}`).join(', ')} (first: ${violations[0]!.object}: ${violations[0]!.detail.slice(0, 120)})`,
        );
      }
      if (Date.now() - quietFrom > options.quiesceMs) break;
      await sleep(clean ? 3_000 : 5_000);
    }
    const diagnosis = violations.length && snapshot ? await diagnose(stack, snapshot, violations, started) : [];
    for (const line of diagnosis) stamp(line);
    stamp(
      quiescenceMs === undefined
        ? `not quiescent after ${options.quiesceMs / 1000} s: ${violations.length} violations`
        : `quiescent after ${(quiescenceMs / 1000).toFixed(1)} s`,
    );
    return {
      seed: options.seed,
      temporal: options.temporal,
      ops: options.ops,
      outcomes,
      faults: injector.counts,
      violations,
      diagnosis,
      quiescenceMs,
      durationMs: Date.now() - started,
      log,
    };
  } finally {
    await injector.stop().catch(() => undefined);
    await stack.stop();
  }
}

/** Which object each MidoNet key would come from: every object the operations write, translated alone. */
function attributionOf(ops: Op[], tenant: string): Map<string, string> {
  const out = new Map<string, string>();
  const note = (translations: Translation[], owner: string) => {
    for (const key of translationKeys(translations)) out.set(key, owner);
  };
  for (const { spec } of ops) {
    if (!spec) continue;
    const owner = targetOf(spec);
    if (spec.kind === 'Translation') note([handWritten(spec, tenant)], owner);
    const projection =
      spec.kind === 'Node'
        ? nodeProjection(spec)
        : spec.kind === 'Pod'
          ? podProjection(spec)
          : spec.kind === 'Service'
            ? serviceProjection(spec)
            : undefined;
    if (!projection) continue;
    const node =
      spec.kind === 'Pod' && spec.node
        ? nodeProjection({ kind: 'Node', name: spec.node, host: Number(spec.node.slice('node-'.length)) })
        : null;
    // A Service's IDs do not depend on its ClusterIP; Endpoints' do, so they come from recordTranslations.
    const result = translate(projection, { tenant, node });
    if (result.ok) note(result.translations, owner);
  }
  return out;
}

/** Adds the owners of the Translations the API server holds now (Endpoints' IDs depend on the allocated ClusterIP). */
async function recordTranslations(stack: ChaosStack, attribution: Map<string, string>): Promise<void> {
  const { items } = (await stack.custom.listClusterCustomObject({ ...TRANSLATION_API })) as {
    items: TranslationObject[];
  };
  for (const t of items) {
    const who =
      t.metadata.labels?.[HAND_WRITTEN_LABEL] !== undefined
        ? `Translation ${t.metadata.namespace}/${t.metadata.name}`
        : subjectOf(t);
    for (const key of listedKeys(t)) if (!attribution.has(key)) attribution.set(key, who);
  }
}

// Past this many ids (parents and next hops included) the journal lines would drown the log; the first few tell the story.
const JOURNAL_SUBJECTS = 30;

/**
 * What the workflows of the objects involved say about themselves (machine state, last error), and for what is missing
 * from MidoNet the emulator's journal of the writes that touched it (times from the run's start), for the diagnosis.
 */
async function diagnose(
  stack: ChaosStack,
  snapshot: Snapshot,
  violations: Violation[],
  startedAt: number,
): Promise<string[]> {
  const lines = await workflowStates(stack.client, snapshot, violations);
  const subjects = journalSubjects(violations, snapshot);
  for (const subject of subjects.slice(0, JOURNAL_SUBJECTS)) {
    const entries = await stack.admin.journal(subject.id).catch((error: Error) => error);
    lines.push(
      ...(entries instanceof Error
        ? [`journal ${subject.id}: ? ${entries.message.slice(0, 120)}`]
        : journalLines(subject, entries, startedAt)),
    );
  }
  if (subjects.length > JOURNAL_SUBJECTS)
    lines.push(`journal: ${subjects.length - JOURNAL_SUBJECTS} more ids not looked up`);
  return lines;
}
