import * as k8s from '@kubernetes/client-node';
import { SingleBar } from 'cli-progress';
import type { Command } from 'commander';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { mapLimit } from '../activities/cloud/limit';
import {
  createTranslationIndex,
  provenanceOf,
  type TranslationIndex,
} from '../activities/kubernetes/translation-index';
import { classify, conflictReason, describeDiff, knownCause, type Finding } from '../activities/midonet/adoption';
import { createMidonetClient, identify, type MidonetClient } from '../activities/midonet/client';
import { kinds } from '../activities/midonet/kinds';
import { validateResources } from '../activities/midonet/validate';
import { loadWorkerConfig, workerSettings } from './worker';
import { loadKubeConfig } from '../platform/kubernetes/kubeconfig';
import { addSettingFlags, duration, type Flags } from '../platform/settings';
import { TRANSLATION_API, workflowId } from '../model/naming';
import { dependencyOf, translateWithDependency } from '../model/translation/dependency';
import { translateGlobals } from '../model/translation';
import { GLOBAL_LABEL, OWNER_UID_LABEL, type BackendResource, type Translation } from '../model/translation/types';
import { UsageError } from './errors';
import { checkFlags } from './object-flags';
import { readTenant, tenantSettings } from './tenant';
import { table } from './operator';

/**
 * `steward adopt [--dry-run]`: what taking over the cluster's Translations finds in MidoNet (issue 11), decided as the
 * pusher decides it (activities/midonet/adoption.ts): what exists identically (taken over without a write), what
 * differs and will be corrected (with the fields and the known cause), what is missing (created), and what conflicts
 * (refused). Only reads. Without `--dry-run` it then waits until the workflows have taken every Translation over.
 */

export interface ListedTranslation extends k8s.KubernetesObject {
  metadata: k8s.V1ObjectMeta & { name: string; namespace: string };
  resources?: BackendResource[];
  status?: {
    conditions?: { type: string; status: string; reason?: string; message?: string; observedGeneration?: number }[];
  };
}

export interface ResourceFinding {
  key: string;
  finding: Finding;
  /** For a difference: the fields, as MidoNet holds them and as asked for. */
  fields?: string;
  /** Why it differs (a known cause) or why it is refused. */
  reason?: string;
}

export interface TranslationSurvey {
  /** `<namespace>/<name>`. */
  name: string;
  /**
   * What happens to the Translation object: `kept` as it is, `rewritten` with Steward's translation of its owner
   * (midonet-kubernetes wrote other resources), `new` (Steward's translation has it, the cluster not yet), `stale`
   * (an owner's Translation Steward's translation no longer has: deleted, with what it pushed), `hand-written` (no
   * owner: pushed as it is).
   */
  translation: 'kept' | 'rewritten' | 'new' | 'stale' | 'hand-written';
  findings: ResourceFinding[];
  /** Resources that are not valid MidoNet resources: the pusher refuses the whole Translation. */
  invalid?: string;
}

/** What Steward's translation makes of the cluster's objects: the Translations its workflows will apply. */
export interface Desired {
  translations: Translation[];
  /** Objects that do not translate (the pusher is never reached for them): `Kind ns/name: reason`. */
  untranslatable: string[];
}

const PARALLEL = 8;

const keyOf = (t: { namespace?: string; name: string }) => `${t.namespace ?? ''}/${t.name}`;
const ownedByObject = (t: ListedTranslation) =>
  OWNER_UID_LABEL in (t.metadata.labels ?? {}) || GLOBAL_LABEL in (t.metadata.labels ?? {});

/**
 * Steward's translation of every Node, Pod, Service and Endpoints (each with what it depends on, as its workflow
 * translates it) and the globals: what the workflows will apply over what midonet-kubernetes wrote.
 */
export async function desiredTranslations(core: k8s.CoreV1Api, tenant: string): Promise<Desired> {
  const objects = [
    ...(await core.listNode()).items.map((o) => ({ ...o, kind: 'Node' })),
    ...(await core.listPodForAllNamespaces()).items.map((o) => ({ ...o, kind: 'Pod' })),
    ...(await core.listServiceForAllNamespaces()).items.map((o) => ({ ...o, kind: 'Service' })),
    ...(await core.listEndpointsForAllNamespaces()).items.map((o) => ({ ...o, kind: 'Endpoints' })),
  ];
  const byRef = new Map(objects.map((o) => [`${o.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`, o]));
  const globals = translateGlobals({ tenant });
  const translations = globals.ok ? [...globals.translations] : [];
  const untranslatable: string[] = [];
  for (const object of objects) {
    const dependency = dependencyOf(object);
    const translated = translateWithDependency(
      object,
      dependency && byRef.get(`${dependency.kind}/${dependency.namespace ?? ''}/${dependency.name}`),
      tenant,
    );
    if (translated.outcome === 'translated') translations.push(...translated.translations);
    else
      untranslatable.push(
        `${object.kind} ${keyOf({ namespace: object.metadata?.namespace, name: object.metadata?.name ?? '' })}: ${translated.outcome === 'wait' ? translated.reason : translated.error.message}`,
      );
  }
  return { translations, untranslatable };
}

async function surveyOne(
  name: string,
  translation: TranslationSurvey['translation'],
  resources: BackendResource[],
  claims: { translated: boolean; self: string },
  client: MidonetClient,
  index: TranslationIndex,
): Promise<TranslationSurvey> {
  const problems = validateResources(resources);
  if (problems.length > 0)
    return { name, translation, findings: [], invalid: problems.map((p) => `${p.field}: ${p.message}`).join('; ') };
  const recorded = new Set(index.recordOf(claims.self));
  const findings: ResourceFinding[] = [];
  for (const resource of resources) {
    const { key } = identify(resource);
    const observation = await client.observe(resource);
    const claim = {
      recorded: recorded.has(key),
      translated: claims.translated,
      recordedByOther: index.recordedByOthers(key, claims.self),
      updatable: kinds[resource.kind].put,
    };
    const finding = classify(observation, claim);
    const diff = observation.exists ? observation.diff : [];
    const reason =
      finding === 'conflict'
        ? conflictReason(claim)
        : finding === 'corrected'
          ? knownCause(name.split('/')[1] ?? name, resource, diff)
          : undefined;
    findings.push({
      key,
      finding,
      ...(diff.length ? { fields: describeDiff(diff) } : {}),
      ...(reason ? { reason } : {}),
    });
  }
  return { name, translation, findings };
}

const sameResources = (a: BackendResource[] = [], b: BackendResource[]) =>
  JSON.stringify(a.map((r) => [r.kind, r.parent ?? '', r.body])) ===
  JSON.stringify(b.map((r) => [r.kind, r.parent ?? '', r.body]));

/**
 * Surveys what taking over finds, a few Translations at a time (`progress` after each): Steward's translation of
 * every owner against MidoNet (its IDs are Steward's to correct), hand-written Translations as they are, and the
 * owners' Translations Steward's translation no longer has.
 */
export async function surveyTranslations(
  listed: ListedTranslation[],
  desired: Translation[],
  client: MidonetClient,
  progress: (done: number, total: number) => void = () => undefined,
): Promise<TranslationSurvey[]> {
  const index = createTranslationIndex();
  for (const object of listed) index.apply({ type: 'upsert', object });
  const existing = new Map(listed.map((t) => [keyOf(t.metadata), t]));
  const wanted = new Set(desired.map(keyOf));
  const selfOf = (t: { namespace?: string; name: string }) =>
    workflowId({ kind: 'Translation', namespace: t.namespace ?? '', name: t.name });
  const work: (() => Promise<TranslationSurvey>)[] = [
    ...desired.map((t) => () => {
      const found = existing.get(keyOf(t));
      const state = !found ? 'new' : sameResources(found.resources, t.resources) ? 'kept' : 'rewritten';
      return surveyOne(keyOf(t), state, t.resources, { translated: true, self: selfOf(t) }, client, index);
    }),
    ...listed
      .filter((t) => !wanted.has(keyOf(t.metadata)))
      .map((t) => () => {
        const resources = (t.resources ?? []).map((r) => ({ kind: r.kind, parent: r.parent ?? '', body: r.body }));
        if (ownedByObject(t))
          return Promise.resolve<TranslationSurvey>({ name: keyOf(t.metadata), translation: 'stale', findings: [] });
        return surveyOne(
          keyOf(t.metadata),
          'hand-written',
          resources,
          { translated: provenanceOf(t).translated, self: selfOf(t.metadata) },
          client,
          index,
        );
      }),
  ];
  let done = 0;
  return mapLimit(work, PARALLEL, async (survey) => {
    const result = await survey();
    progress(++done, work.length);
    return result;
  });
}

const FINDINGS: Finding[] = ['identical', 'corrected', 'missing', 'conflict'];
const count = (s: TranslationSurvey, f: Finding) => s.findings.filter((r) => r.finding === f).length;

/** The survey as a person reads it: a line of totals, a row per Translation, then every difference and refusal. */
export function formatSurvey(surveys: TranslationSurvey[], dryRun: boolean): string {
  const totals = Object.fromEntries(FINDINGS.map((f) => [f, surveys.reduce((n, s) => n + count(s, f), 0)])) as Record<
    Finding,
    number
  >;
  const invalid = surveys.filter((s) => s.invalid);
  const lines = [
    `${surveys.length} Translations, ${surveys.reduce((n, s) => n + s.findings.length, 0)} resources${dryRun ? ' (dry run: nothing written)' : ''}:`,
    `  ${totals.identical} identical (taken over without a write), ${totals.corrected} to correct, ${totals.missing} missing (to create), ${totals.conflict} in conflict (refused: ResourceConflict)${invalid.length ? `, ${invalid.length} Translations invalid` : ''}`,
    '',
    table(
      ['TRANSLATION', 'OBJECT', 'IDENTICAL', 'CORRECT', 'MISSING', 'CONFLICT'],
      surveys.map((s) => [s.name, s.translation, ...FINDINGS.map((f) => String(count(s, f)))]),
    ),
  ];
  const notable = surveys.flatMap((s) => [
    ...(s.invalid ? [[s.name, '', 'invalid', '', s.invalid]] : []),
    ...s.findings
      .filter((r) => r.finding === 'corrected' || r.finding === 'conflict')
      .map((r) => [s.name, r.key, r.finding === 'corrected' ? 'correct' : 'conflict', r.fields ?? '', r.reason ?? '']),
  ]);
  if (notable.length)
    lines.push(
      '',
      'differences',
      table(['TRANSLATION', 'RESOURCE', 'ACTION', 'FIELDS (MidoNet → asked)', 'REASON'], notable),
    );
  return `${lines.join('\n')}\n`;
}

/** Taking over cannot finish: a conflict or an invalid Translation needs an operator. */
const blocks = (s: TranslationSurvey) => s.invalid || s.findings.some((r) => r.finding === 'conflict');

/**
 * Polls until every Translation is Ready at its generation (the workflows took it over) or `timeoutMs` passed;
 * `progress(ready, total)` after each look.
 */
export async function untilReady(
  list: () => Promise<ListedTranslation[]>,
  timeoutMs: number,
  progress: (ready: number, total: number) => void = () => undefined,
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const live = await list();
    const notReady = live.filter((t) => !readyAtGeneration(t));
    progress(live.length - notReady.length, live.length);
    if (notReady.length === 0 || Date.now() >= deadline) return { live, notReady };
    await sleep(1000);
  }
}

const readyAtGeneration = (t: ListedTranslation) =>
  t.status?.conditions?.some(
    (c) => c.type === 'Ready' && c.status === 'True' && c.observedGeneration === t.metadata.generation,
  ) ?? false;

function progressBar(stream: NodeJS.WriteStream, phase: string, total: number) {
  if (!stream.isTTY) return { update: () => undefined, stop: () => undefined };
  const bar = new SingleBar({
    stream,
    format: `${phase} [{bar}] {value}/{total}`,
    hideCursor: true,
    clearOnComplete: true,
  });
  bar.start(Math.max(total, 1), 0);
  return {
    update: (done: number, newTotal = total) => {
      bar.setTotal(Math.max(newTotal, 1));
      bar.update(done);
    },
    stop: () => bar.stop(),
  };
}

const adoptSettings = {
  kubeconfig: workerSettings.kubeconfig,
  midonetUrl: workerSettings.midonetUrl,
  midonetUsername: workerSettings.midonetUsername,
  midonetPassword: workerSettings.midonetPassword,
  midonetProject: workerSettings.midonetProject,
};
const adoptFlags = z.object({
  dryRun: z.boolean().default(false),
  timeout: duration.default(10 * 60_000),
  context: z.string().min(1, 'must not be empty').optional(),
});

export function registerAdoptCommand(program: Command): void {
  const command = program
    .command('adopt')
    .description(
      "take over the cluster's Translations (from midonet-kubernetes): what MidoNet holds identically, what differs and will be corrected, what is missing; then wait until every one is Ready",
    )
    .option('--dry-run', 'only report; change nothing and do not wait')
    .option('--timeout <duration>', 'how long to wait for every Translation to be Ready, e.g. 90s, 10m (default 10m)')
    .option('--context <name>', "kubeconfig context of the cluster (default: the kubeconfig's current context)");
  addSettingFlags(addSettingFlags(command, adoptSettings), tenantSettings).action(
    async (options: Flags & { dryRun?: boolean; timeout?: string }, self: Command) => {
      const flags = checkFlags(adoptFlags, options);
      const config = loadWorkerConfig(options);
      if (!config.midonet)
        throw new UsageError(
          `MidoNet is needed: --midonet-url / ${workerSettings.midonetUrl.env}, with a user and ${workerSettings.midonetPassword.env}`,
        );
      const kubeConfig = loadKubeConfig(config.kubeconfig, flags.context);
      if (!kubeConfig) throw new UsageError('no cluster: give --kubeconfig / KUBECONFIG');
      const custom = kubeConfig.makeApiClient(k8s.CustomObjectsApi);
      const list = async () =>
        ((await custom.listClusterCustomObject({ ...TRANSLATION_API })) as { items: ListedTranslation[] }).items;
      const out = (text: string) => self.configureOutput().writeOut?.(text);

      const translations = await list();
      const desired = await desiredTranslations(kubeConfig.makeApiClient(k8s.CoreV1Api), readTenant(options));
      const surveying = progressBar(process.stderr, 'surveying', translations.length);
      const surveys = await surveyTranslations(
        translations,
        desired.translations,
        createMidonetClient(config.midonet),
        surveying.update,
      ).finally(surveying.stop);
      out(formatSurvey(surveys, flags.dryRun));
      if (desired.untranslatable.length)
        out(`\nobjects Steward does not translate (yet):\n${desired.untranslatable.map((u) => `  ${u}`).join('\n')}\n`);
      if (flags.dryRun) {
        const blocking = surveys.filter(blocks).length;
        if (blocking) throw new Error(`${blocking} Translations cannot be taken over as they are (above)`);
        return;
      }

      const waiting = progressBar(process.stderr, 'Ready', translations.length);
      const { live, notReady } = await untilReady(list, flags.timeout, waiting.update).finally(waiting.stop);
      if (notReady.length === 0) {
        out(`all ${live.length} Translations Ready: taken over\n`);
        return;
      }
      const ready = (t: ListedTranslation) => t.status?.conditions?.find((c) => c.type === 'Ready');
      out(
        `${notReady.length} of ${live.length} Translations not Ready after ${flags.timeout / 1000}s\n${table(
          ['TRANSLATION', 'REASON', 'MESSAGE'],
          notReady.map((t) => [
            `${t.metadata.namespace}/${t.metadata.name}`,
            ready(t)?.reason ?? 'no status yet',
            (ready(t)?.message ?? '').slice(0, 160),
          ]),
        )}\n`,
      );
      throw new Error(`${notReady.length} of ${live.length} Translations not Ready after ${flags.timeout / 1000}s`);
    },
  );
}
