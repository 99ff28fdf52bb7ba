import { randomUUID } from 'node:crypto';
import { hostname, userInfo } from 'node:os';
import type { KubeConfig } from '@kubernetes/client-node';
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type { UpdateDefinition } from '@temporalio/common';
import type { Command } from 'commander';
import type { z } from 'zod';
import { loadTemporalConfig, temporalSettings, type TemporalConfig } from '../platform/temporal-config';
import { connectClient } from '../platform/temporal-connection';
import { executeUpdateWhenReady } from '../platform/temporal-update';
import { addSettingFlags, type Flags } from '../platform/settings';
import {
  cleanupModes,
  cleanupRequest,
  cleanupUpdate,
  operatorRequestSchema,
  pauseUpdate,
  refreshUpdate,
  resumeUpdate,
  stateQuery,
  type ActionResult,
  type CleanupMode,
  type LifecycleError,
  type LifecycleStateView,
} from '../model/messages';
import { parseTarget, workflowId, type ObjectRef } from '../model/naming';
import type { OperatorAction } from '../model/operator-request';
import { UsageError } from './errors';
import { requestThroughKubernetes } from './operator-request';
import { addObjectFlags, readObjectFlags, type ObjectFlags } from './object-flags';
import { addNoHeaders, colorState, serialize, terminalOf } from './output';
import { confirmMassDeletion, describeGuard, guardStatus } from './mass-deletion';

/**
 * The operator's commands: the operator actions (cleanup, pause, resume, refresh: the workflows' Updates, so a
 * rejection comes back with its reason) and `steward status` (the `state` query, of the object's Translations too). Requests are checked here with the
 * workflows' own schemas before any call. Output goes through commander's configured writer. They take the shared
 * Temporal settings, task queue included, so one set of flags or variables serves every command.
 */

/** Flags without defaults: a given flag wins over the variable, and config.ts applies the defaults. */
const defaultRequester = () => `${process.env.USER || userInfo().username}@${hostname()}`;

const requestFlags: Record<string, string> = { reason: '--reason', requestedBy: '--by', mode: '--mode' };

async function withWorkflow<T>(config: TemporalConfig, id: string, use: (client: Client) => Promise<T>): Promise<T> {
  const client = await connectClient(config);
  try {
    return await use(client);
  } catch (error) {
    if (error instanceof WorkflowNotFoundError)
      throw new Error(
        `no workflow ${id} in namespace ${config.namespace} at ${config.address}${id.startsWith('translation/') ? TRANSLATION_HINT : ''}`,
      );
    throw error;
  } finally {
    await client.connection.close();
  }
}

/** One workflow per object: a Translation an object owns is pushed by that object's workflow, not its own. */
const TRANSLATION_HINT =
  "; a Translation a Node, Pod, Service or Endpoints owns has no workflow of its own: ask its owner's (its ownerReferences name it)";

interface ActionOptions extends Flags {
  reason?: string;
  by?: string;
  via?: string;
  mode?: string;
  evenIfLive?: boolean;
  confirmMassDeletion?: boolean;
}

const kubeConfigOf = (flags: ObjectFlags, why = 'the guard is on its CRD') => {
  const kubeConfig = flags.kubeConfig?.();
  if (!kubeConfig) throw new Error(`no Kubernetes cluster: give --kubeconfig / KUBECONFIG (${why})`);
  return kubeConfig;
};

/** `steward cleanup --confirm-mass-deletion --reason`: the go-ahead for the hold in force (cli/mass-deletion.ts). */
async function confirmMassDeletionCommand(options: ActionOptions, self: Command) {
  const flags = readObjectFlags(options);
  const temporal = loadTemporalConfig(options);
  const reason = (options.reason ?? '').trim();
  if (!reason) throw new UsageError('--confirm-mass-deletion: --reason: a reason is required (it is recorded)');
  const client = await connectClient(temporal);
  try {
    const result = await confirmMassDeletion({
      kubeConfig: kubeConfigOf(flags),
      temporal: client,
      taskQueue: temporal.taskQueue,
      reason,
      by: options.by ?? defaultRequester(),
    });
    const { by, since } = result.goAhead;
    self
      .configureOutput()
      .writeOut?.(
        serialize(result, flags.output) ??
          `mass deletion confirmed by ${by} for the hold of ${since}: MidoNet deletions go on; ${result.woken} held lifecycles woken\n`,
      );
  } finally {
    await client.connection.close();
  }
}

/** The object the words name (`pod/nginx -n web`, `pod web/nginx`, `pod/web/nginx`): its workflow id. */
const targetId = (words: string[], flags: ObjectFlags, { clusterId }: TemporalConfig) =>
  workflowId(parseTarget(words, flags.namespace, flags.defaultNamespace), clusterId);

const TARGET_HELP =
  '<target> is kind/name with -n (pod/nginx -n web), or the older kind namespace/name; a Node has no namespace';

/** `--via`: through Kubernetes, as the object's RBAC allows (the default), or straight to Temporal (administrators). */
const PATHS = ['kubernetes', 'temporal'] as const;
/** Stands for the requester in the checks before a request through Kubernetes, which names the authenticated user. */
const AUTHENTICATED = 'the authenticated user';

function registerAction<R>(
  program: Command,
  name: OperatorAction,
  description: string,
  update: UpdateDefinition<ActionResult, [R]>,
  schema: z.ZodType<R>,
) {
  const command = program
    .command(`${name} ${name === 'cleanup' ? '[target]' : '<target>'} [name]`)
    .description(`${description}; ${TARGET_HELP}`)
    .option('--reason <text>', 'why (recorded in the workflow with who asked)')
    .option(
      '--via <path>',
      "kubernetes (default): the request is written on the object as your kubeconfig's user, so RBAC decides who may ask (patch on the object), and Steward's starter relays it | temporal: sent to the workflow directly, an administrator's path (whoever holds the Temporal namespace may act on any object)",
    )
    .option(
      '--by <who>',
      'with --via temporal: who asks (default $USER@hostname); else the user Kubernetes authenticates',
    );
  if (name === 'cleanup')
    command
      .option('--mode <mode>', `${cleanupModes.join(' | ')} (default retry)`)
      .option(
        '--even-if-live',
        'let orphan or force end the lifecycle of an object that is not being deleted (recorded with the action)',
      )
      .option(
        '--confirm-mass-deletion',
        'no target: let MidoNet deletions held by the guard against mass deletion go on (recorded on the Translation CRD with who and why), and retry the lifecycles held meanwhile',
      );
  addSettingFlags(addObjectFlags(command, ['json', 'yaml', 'jsonpath']), temporalSettings).action(
    async (target: string | undefined, objectName: string | undefined, options: ActionOptions, self: Command) => {
      if (options.confirmMassDeletion) {
        if (target) throw new UsageError('--confirm-mass-deletion takes no target: it is for the whole cluster');
        return confirmMassDeletionCommand(options, self);
      }
      if (!target) throw new UsageError(`a target is required; ${TARGET_HELP}`);
      const via = options.via ?? 'kubernetes';
      if (!(PATHS as readonly string[]).includes(via))
        throw new UsageError(`--via: ${PATHS.join(' or ')} (got "${via}")`);
      if (via === 'kubernetes' && options.by !== undefined)
        throw new UsageError(
          `--by is for --via temporal; through Kubernetes, who asks is the user the API server authenticates`,
        );
      const flags = readObjectFlags(options);
      const temporal = loadTemporalConfig(options);
      const ref = parseTarget([target, ...(objectName ? [objectName] : [])], flags.namespace, flags.defaultNamespace);
      const id = workflowId(ref, temporal.clusterId);
      const request = schema.safeParse({
        reason: options.reason ?? '',
        requestedBy: via === 'temporal' ? (options.by ?? defaultRequester()) : AUTHENTICATED,
        mode: options.mode ?? 'retry',
        ...(options.evenIfLive ? { evenIfLive: true } : {}),
      });
      if (!request.success) {
        const problems = request.error.issues.map(
          (issue) => `${requestFlags[String(issue.path[0])] ?? String(issue.path[0])}: ${issue.message}`,
        );
        throw new UsageError(`${id}: ${problems.join('; ')}`);
      }
      const result =
        via === 'temporal'
          ? await viaTemporal(temporal, id, update, request.data)
          : await viaKubernetes(kubeConfigOf(flags, 'the request is written on the object'), ref, id, name, options);
      self
        .configureOutput()
        .writeOut?.(
          serialize({ workflowId: id, action: name, ...result }, flags.output) ??
            `${name} ${id}: accepted in state ${result.state}: ${result.message}${'by' in result ? ` (asked by ${String(result.by)})` : ''}\n`,
        );
    },
  );
}

/** The administrator's path: the Update sent to the workflow, as whoever holds the Temporal namespace may. */
function viaTemporal<R>(temporal: TemporalConfig, id: string, update: UpdateDefinition<ActionResult, [R]>, args: R) {
  return withWorkflow(temporal, id, async (client) => {
    try {
      return await executeUpdateWhenReady(client.workflow.getHandle(id), update, args);
    } catch (error) {
      if (error instanceof WorkflowUpdateFailedError)
        throw new Error(`${id} rejected: ${error.cause?.message ?? error.message}`);
      throw error;
    }
  });
}

/** The request written on the object (cli/operator-request.ts); the starter's answer, or its rejection thrown. */
async function viaKubernetes(
  kubeConfig: KubeConfig,
  ref: ObjectRef,
  id: string,
  action: OperatorAction,
  options: ActionOptions,
) {
  const answer = await requestThroughKubernetes(kubeConfig, ref, {
    id: randomUUID(),
    action,
    reason: options.reason ?? '',
    ...(action === 'cleanup' ? { mode: (options.mode ?? 'retry') as CleanupMode } : {}),
    ...(options.evenIfLive ? { evenIfLive: true as const } : {}),
  });
  if (!answer.accepted) throw new Error(`${id} rejected: ${answer.message}`);
  return { accepted: true as const, state: answer.state ?? '', message: answer.message, by: answer.by };
}

export function table(header: string[], rows: string[][], headers = true): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  return [...(headers ? [header] : []), ...rows]
    .map(
      (row) =>
        `  ${row
          .map((cell, i) => cell.padEnd(widths[i] ?? 0))
          .join('  ')
          .trimEnd()}`,
    )
    .join('\n');
}

const recentActions = 10;
const describeError = (e: LifecycleError) => `${e.reason}: ${e.message}${e.at ? ` (${e.at})` : ''}`;

/**
 * The `state` query as a person reads it. An object's workflow pushes its Translations itself, so its state says
 * what MidoNet holds: `ready` is pushed.
 */
export function formatStatus(
  id: string,
  view: LifecycleStateView,
  { ui, color = false, headers = true }: { ui?: string; color?: boolean; headers?: boolean } = {},
): string {
  const { state, resources } = view;
  // A lasting condition (what an object waits for) has no time of its own: no empty "()" for it.
  const error = view.lastError ? describeError(view.lastError) : 'none';
  const actions = view.actions.slice(-recentActions);
  return [
    `${id}${view.uid ? `  (uid ${view.uid})` : ''}`,
    `  state:       ${color ? colorState(state) : state}`,
    `  last error:  ${error}`,
    ...(ui ? [`  temporal ui: ${ui}`] : []),
    '',
    resources.length
      ? `resources\n${table(
          ['KIND', 'ID', 'STATE', 'SINCE'],
          resources.map((r) => [r.kind, r.id, r.state, r.lastTransitionTime ?? '']),
          headers,
        )}`
      : 'resources: none',
    '',
    actions.length
      ? `recent operator actions\n${table(
          ['AT', 'ACTION', 'MODE', 'BY', 'REASON'],
          actions.map((a) => [
            a.at,
            a.action,
            `${a.mode ?? ''}${a.evenIfLive ? ' (even if live)' : ''}`,
            a.requestedBy,
            a.reason,
          ]),
          headers,
        )}`
      : 'recent operator actions: none',
    '',
  ].join('\n');
}

export function registerOperatorCommands(program: Command): void {
  registerAction(
    program,
    'cleanup',
    'clean up a stuck object: retry now, orphan (release the finalizer, keep backend resources recorded as orphaned) or force',
    cleanupUpdate,
    cleanupRequest,
  );
  registerAction(program, 'pause', "pause an object's lifecycle workflow", pauseUpdate, operatorRequestSchema);
  registerAction(program, 'resume', "resume a paused object's lifecycle workflow", resumeUpdate, operatorRequestSchema);
  registerAction(
    program,
    'refresh',
    're-observe the backend now and repair drift',
    refreshUpdate,
    operatorRequestSchema,
  );
}

export function registerStatusCommand(program: Command): void {
  const command = program
    .command('status [target] [name]')
    .description(
      `show an object's lifecycle state, resources, last error and recent operator actions; ${TARGET_HELP}; with no target, whether the guard against mass deletion holds`,
    )
    .option('--json', 'deprecated: use -o json');
  addSettingFlags(addObjectFlags(addNoHeaders(command), ['json', 'yaml', 'jsonpath']), temporalSettings).action(
    async (
      target: string | undefined,
      objectName: string | undefined,
      options: Flags & { json?: boolean },
      self: Command,
    ) => {
      if (options.json) process.stderr.write('warning: --json is deprecated: use -o json\n');
      const flags = readObjectFlags({ ...options, output: options.output ?? (options.json ? 'json' : undefined) });
      if (!target) {
        const guard = await guardStatus(kubeConfigOf(flags));
        self
          .configureOutput()
          .writeOut?.(serialize(guard, flags.output) ?? `mass-deletion guard: ${describeGuard(guard)}\n`);
        return;
      }
      const temporal = loadTemporalConfig(options);
      const id = targetId([target, ...(objectName ? [objectName] : [])], flags, temporal);
      const view = await withWorkflow(temporal, id, (client) => client.workflow.getHandle(id).query(stateQuery));
      const ui = flags.link(temporal.namespace, id);
      const data = { ...view, ...(ui ? { ui } : {}) };
      self
        .configureOutput()
        .writeOut?.(
          serialize(data, flags.output) ??
            formatStatus(id, view, { ui, ...terminalOf(process.stdout), headers: options.headers !== false }),
        );
    },
  );
}
