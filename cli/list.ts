import { WorkflowNotFoundError, type Client, type WorkflowExecutionInfo } from '@temporalio/client';
import type { Command } from 'commander';
import { z } from 'zod';
import { loadTemporalConfig, temporalSettings, type TemporalConfig } from '../platform/temporal-config';
import { connectClient } from '../platform/temporal-connection';
import { addSettingFlags, type Flags } from '../platform/settings';
import { stateQuery } from '../model/messages';
import {
  clusterFilter,
  LIFECYCLE_KINDS,
  lifecycleKindOf,
  parseTarget,
  workflowId,
  type LifecycleKind,
} from '../model/naming';
import { K8sKind, K8sName, K8sNamespace, K8sUID, LifecycleState } from '../model/search-attributes';
import { lifecycleStates } from '../workflows/machines';
import { UsageError } from './errors';
import { addObjectFlags, checkFlags, readObjectFlags, type ObjectFlags } from './object-flags';
import {
  addNoHeaders,
  age,
  colorState,
  listing,
  serialize,
  terminalOf,
  type OutputFormat,
  type Terminal,
} from './output';

/**
 * `steward list` (alias `get`): the objects Steward manages, as Temporal visibility lists their running lifecycle
 * workflows (the search attributes the starter and the workflows keep), in kubectl's manner. Named objects are
 * described one by one instead, which visibility's lag cannot hide. `-o wide` asks each workflow's `state` query for
 * its last error's reason: one call per object, so only when asked.
 */

/** One object as listed: what visibility knows, and with `-o wide` what the workflow says. */
export interface ListedObject {
  kind: string;
  namespace?: string;
  name: string;
  uid?: string;
  /** LifecycleState; absent until the workflow first publishes it. */
  state?: string;
  /** The last error's reason (`-o wide`); absent when there is none. */
  reason?: string;
  workflowId: string;
  startTime: string;
  /** Its page in the Temporal UI (`-o wide`, with STEWARD_TEMPORAL_UI_URL). */
  ui?: string;
}

export interface ListFilter {
  kinds: readonly LifecycleKind[];
  /** Undefined: every namespace. Nodes, which have none, are listed whatever it is. */
  namespace?: string;
  states: readonly string[];
}

const quoted = (values: readonly string[]) => values.map((v) => `'${v.replace(/'/g, "\\'")}'`).join(', ');

/** The visibility query of a filter: running workflows of the kinds, in the namespace, in the states. */
export function visibilityQuery({ kinds, namespace, states }: ListFilter, clusterId?: string): string {
  const scoped = kinds.filter((k) => k !== 'Node');
  const cluster = kinds.filter((k) => k === 'Node');
  const inNamespace = [
    ...(scoped.length
      ? [`(${K8sKind.name} IN (${quoted(scoped)}) AND ${K8sNamespace.name} = ${quoted([namespace ?? ''])})`]
      : []),
    ...(cluster.length ? [`${K8sKind.name} IN (${quoted(cluster)})`] : []),
  ];
  return [
    `ExecutionStatus = 'Running'`,
    namespace === undefined ? `${K8sKind.name} IN (${quoted(kinds)})` : `(${inNamespace.join(' OR ')})`,
    ...(states.length ? [`${LifecycleState.name} IN (${quoted(states)})`] : []),
    ...[clusterFilter(clusterId) ?? []].flat(),
  ].join(' AND ');
}

export function listedObject(
  info: Pick<WorkflowExecutionInfo, 'typedSearchAttributes' | 'workflowId' | 'startTime'>,
): ListedObject {
  const attributes = info.typedSearchAttributes;
  const [namespace, uid, state] = [
    attributes.get(K8sNamespace),
    attributes.get(K8sUID),
    attributes.get(LifecycleState),
  ];
  return {
    kind: attributes.get(K8sKind) ?? '',
    ...(namespace ? { namespace } : {}),
    name: attributes.get(K8sName) ?? info.workflowId,
    ...(uid ? { uid } : {}),
    ...(state ? { state } : {}),
    workflowId: info.workflowId,
    startTime: info.startTime.toISOString(),
  };
}

const byName = (a: ListedObject, b: ListedObject) =>
  a.kind.localeCompare(b.kind) || (a.namespace ?? '').localeCompare(b.namespace ?? '') || a.name.localeCompare(b.name);

/** The list as `format` asks: JSON or YAML (`{ items }`), workflow ids (`-o name`, what `status` takes), or a table. */
export function formatList(
  objects: ListedObject[],
  format: OutputFormat | undefined,
  terminal: Terminal,
  now = new Date(),
): string {
  const serialized = serialize({ items: objects }, format);
  if (serialized !== undefined) return serialized;
  if (format === 'name') return objects.map((o) => `${o.workflowId}\n`).join('');
  const wide = format === 'wide';
  const links = wide && objects.some((o) => o.ui);
  const header = [
    'KIND',
    'NAMESPACE',
    'NAME',
    'STATE',
    'AGE',
    ...(wide ? ['REASON'] : []),
    ...(links ? ['TEMPORAL UI'] : []),
  ];
  const rows = objects.map((o) => [
    o.kind,
    o.namespace ?? '',
    o.name,
    o.state ?? '',
    age(new Date(o.startTime), now),
    ...(wide ? [o.reason ?? ''] : []),
    ...(links ? [o.ui ?? ''] : []),
  ]);
  return listing(header, rows, terminal, { 3: colorState });
}

/** Runs `use` on at most `limit` items at once. */
async function eachLimited<T>(items: T[], limit: number, use: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      for (let item = queue.shift(); item; item = queue.shift()) await use(item);
    }),
  );
}

/** `-o wide`: each object's last error reason from its workflow, and its UI link. */
async function widen(client: Client, objects: ListedObject[], flags: ObjectFlags, temporal: TemporalConfig) {
  await eachLimited(objects, 8, async (object) => {
    const ui = flags.link(temporal.namespace, object.workflowId);
    if (ui) object.ui = ui;
    const view = await client.workflow
      .getHandle(object.workflowId)
      .query(stateQuery)
      .catch(() => undefined);
    if (view?.lastError) object.reason = view.lastError.reason;
  });
}

/** Named objects: each described, so one just started is not missed; those with no running workflow are returned. */
async function describeNamed(client: Client, ids: string[]): Promise<{ found: ListedObject[]; missing: string[] }> {
  const found: ListedObject[] = [];
  const missing: string[] = [];
  await eachLimited(ids, 8, async (id) => {
    const description = await client.workflow
      .getHandle(id)
      .describe()
      .catch((error: unknown) => {
        if (error instanceof WorkflowNotFoundError) return undefined;
        throw error;
      });
    if (description?.status.name === 'RUNNING') found.push(listedObject(description));
    else missing.push(id);
  });
  return { found, missing };
}

const allStates = [...new Set(LIFECYCLE_KINDS.flatMap((kind) => lifecycleStates(kind)))];

const commaList = <T extends string>(
  what: string,
  known: (word: string) => T | undefined,
  expected: readonly string[],
) =>
  z.string().transform((value, ctx) =>
    value.split(',').flatMap((word) => {
      const found = known(word.trim());
      if (found) return [found];
      ctx.addIssue({ code: 'custom', message: `unknown ${what} "${word}": expected one of ${expected.join(', ')}` });
      return [];
    }),
  );

const listFlags = z.object({
  allNamespaces: z.boolean().optional(),
  kind: commaList('kind', lifecycleKindOf, LIFECYCLE_KINDS).optional(),
  state: commaList(
    'state',
    (s) => allStates.find((known) => known.toLowerCase() === s.toLowerCase()),
    allStates,
  ).optional(),
});

interface ListRequest {
  filter: ListFilter;
  /** Workflow ids of objects named on the command line. */
  named: string[];
}

/**
 * What the words and flags ask for: `list`, `list pods,nodes`, `list pod/nginx -n web`, `list pod/web/nginx node/n1`.
 * Without -A the namespace is -n's, else the kubeconfig context's, and Nodes (which have no namespace) are listed only
 * when asked for by kind, as `kubectl get all` leaves them out.
 */
export function listRequest(
  words: string[],
  options: Flags,
  flags: ObjectFlags,
  { clusterId }: Pick<TemporalConfig, 'clusterId'> = {},
): ListRequest {
  const { allNamespaces, kind = [], state = [] } = checkFlags(listFlags, options);
  if (allNamespaces && flags.namespace) throw new UsageError('give -n/--namespace or -A/--all-namespaces, not both');
  const namespace = allNamespaces ? undefined : (flags.namespace ?? flags.defaultNamespace());
  const named = words.filter((w) => w.includes('/'));
  const kindWords = words.filter((w) => !w.includes('/'));
  if (kindWords.length > 1 || (kindWords.length && named.length))
    throw new UsageError(`give kinds (pods,nodes) or objects (pod/nginx …), not both ("${words.join(' ')}")`);
  const positional = kindWords.length ? (checkFlags(listFlags, { kind: kindWords[0] }).kind ?? []) : [];
  const kinds = [...new Set([...kind, ...positional])];
  const everyKind = allNamespaces ? LIFECYCLE_KINDS : LIFECYCLE_KINDS.filter((k) => k !== 'Node');
  return {
    filter: { kinds: kinds.length ? kinds : everyKind, namespace, states: state },
    named: named.map((w) =>
      workflowId(
        parseTarget([w], flags.namespace, () => namespace ?? 'default'),
        clusterId,
      ),
    ),
  };
}

export function registerListCommand(program: Command): void {
  const command = program
    .command('list [words...]')
    .alias('get')
    .description(
      'list the objects Steward manages (running lifecycle workflows): list, list pods,nodes, list pod/nginx -n web, list -A --state stuck',
    )
    .option('-A, --all-namespaces', 'every namespace, Nodes included')
    .option(
      '--kind <kinds>',
      `comma-separated: ${LIFECYCLE_KINDS.join(', ')} (any case, plural or short: po, svc, ep, no)`,
    )
    .option('--state <states>', 'comma-separated LifecycleState values, e.g. stuck,paused');
  addSettingFlags(
    addObjectFlags(addNoHeaders(command), ['wide', 'json', 'yaml', 'name', 'jsonpath']),
    temporalSettings,
  ).action(async (words: string[], options: Flags, self: Command) => {
    const flags = readObjectFlags(options);
    const temporal = loadTemporalConfig(options);
    const { filter, named } = listRequest(words, options, flags, temporal);
    const client = await connectClient(temporal);
    let missing: string[] = [];
    let objects: ListedObject[];
    try {
      if (named.length) ({ found: objects, missing } = await describeNamed(client, named));
      else {
        objects = [];
        for await (const info of client.workflow.list({ query: visibilityQuery(filter, temporal.clusterId) }))
          objects.push(listedObject(info));
      }
      objects = objects.filter((o) => !filter.states.length || filter.states.includes(o.state ?? ''));
      if (flags.output === 'wide') await widen(client, objects, flags, temporal);
    } finally {
      await client.connection.close();
    }
    objects.sort(byName);
    // Data formats print even an empty list ({ items: [] }); a table says there is nothing.
    if (objects.length || serialize({ items: objects }, flags.output) !== undefined)
      self
        .configureOutput()
        .writeOut?.(
          formatList(objects, flags.output, { ...terminalOf(process.stdout), headers: options.headers !== false }),
        );
    else if (!missing.length)
      process.stderr.write(`No resources found${filter.namespace ? ` in ${filter.namespace} namespace` : ''}.\n`);
    if (missing.length) throw new Error(`no running workflow ${missing.join(', ')}`);
  });
}
