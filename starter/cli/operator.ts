import { hostname, userInfo } from 'node:os';
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type { UpdateDefinition } from '@temporalio/common';
import type { Command } from 'commander';
import type { z } from 'zod';
import { loadTemporalConfig, temporalSettings, type TemporalConfig } from '../../worker/config';
import { connectClient } from '../../worker/connection';
import { addSettingFlags, type Flags } from '../../worker/settings';
import { cleanupModes, cleanupRequest, cleanupUpdate, operatorRequestSchema, pauseUpdate, refreshUpdate, resumeUpdate, stateQuery, type ActionResult, type LifecycleStateView } from '../../workflows/messages';
import { parseObjectRef, workflowId } from '../../workflows/naming';

/**
 * The operator's commands: the operator actions (cleanup, pause, resume, refresh: the workflows' Updates, so a
 * rejection comes back with its reason) and `steward status` (the `state` query). Requests are checked here with the
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
    if (error instanceof WorkflowNotFoundError) throw new Error(`no workflow ${id} in namespace ${config.namespace} at ${config.address}`);
    throw error;
  } finally {
    await client.connection.close();
  }
}

interface ActionOptions extends Flags {
  reason?: string;
  by?: string;
  mode?: string;
}

function registerAction<R>(program: Command, name: string, description: string, update: UpdateDefinition<ActionResult, [R]>, schema: z.ZodType<R>) {
  const command = program
    .command(`${name} <kind> <target>`)
    .description(`${description}; <target> is <namespace>/<name>, or <name> for a Node`)
    .option('--reason <text>', 'why (recorded in the workflow with who asked)')
    .option('--by <who>', 'who asks (default $USER@hostname)');
  if (name === 'cleanup') command.option('--mode <mode>', `${cleanupModes.join(' | ')} (default retry)`);
  addSettingFlags(command, temporalSettings).action(async (kind: string, target: string, options: ActionOptions, self: Command) => {
    const id = workflowId(parseObjectRef(kind, target));
    const request = schema.safeParse({ reason: options.reason ?? '', requestedBy: options.by ?? defaultRequester(), mode: options.mode ?? 'retry' });
    if (!request.success) {
      const problems = request.error.issues.map((issue) => `${requestFlags[String(issue.path[0])] ?? String(issue.path[0])}: ${issue.message}`);
      throw new Error(`${name} ${id}: ${problems.join('; ')}`);
    }
    const result = await withWorkflow(loadTemporalConfig(options), id, async (client) => {
      try {
        return await client.workflow.getHandle(id).executeUpdate(update, { args: [request.data] });
      } catch (error) {
        if (error instanceof WorkflowUpdateFailedError) throw new Error(`${name} ${id} rejected: ${error.cause?.message ?? error.message}`);
        throw error;
      }
    });
    self.configureOutput().writeOut?.(`${name} ${id}: accepted in state ${result.state}: ${result.message}\n`);
  });
}

export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  return [header, ...rows].map((row) => `  ${row.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join('  ').trimEnd()}`).join('\n');
}

const recentActions = 10;

/** The `state` query as a person reads it. */
export function formatStatus(id: string, view: LifecycleStateView): string {
  // A lasting condition (what an object waits for) has no time of its own: no empty "()" for it.
  const error = view.lastError ? `${view.lastError.reason}: ${view.lastError.message}${view.lastError.at ? ` (${view.lastError.at})` : ''}` : 'none';
  const actions = view.actions.slice(-recentActions);
  return [
    `${id}${view.uid ? `  (uid ${view.uid})` : ''}`,
    `  state:       ${view.state}`,
    `  last error:  ${error}`,
    '',
    view.resources.length
      ? `resources\n${table(['KIND', 'ID', 'STATE', 'SINCE'], view.resources.map((r) => [r.kind, r.id, r.state, r.lastTransitionTime ?? '']))}`
      : 'resources: none',
    '',
    actions.length
      ? `recent operator actions\n${table(['AT', 'ACTION', 'MODE', 'BY', 'REASON'], actions.map((a) => [a.at, a.action, a.mode ?? '', a.requestedBy, a.reason]))}`
      : 'recent operator actions: none',
    '',
  ].join('\n');
}

export function registerOperatorCommands(program: Command): void {
  registerAction(program, 'cleanup', 'clean up a stuck object: retry now, orphan (release the finalizer, keep backend resources recorded as orphaned) or force', cleanupUpdate, cleanupRequest);
  registerAction(program, 'pause', "pause an object's lifecycle workflow", pauseUpdate, operatorRequestSchema);
  registerAction(program, 'resume', "resume a paused object's lifecycle workflow", resumeUpdate, operatorRequestSchema);
  registerAction(program, 'refresh', 're-observe the backend now and repair drift', refreshUpdate, operatorRequestSchema);

  addSettingFlags(program.command('status <kind> <target>').description("show an object's lifecycle state, resources, last error and recent operator actions").option('--json', 'print the raw state as JSON'), temporalSettings).action(
    async (kind: string, target: string, options: Flags & { json?: boolean }, self: Command) => {
      const id = workflowId(parseObjectRef(kind, target));
      const view = await withWorkflow(loadTemporalConfig(options), id, (client) => client.workflow.getHandle(id).query(stateQuery));
      self.configureOutput().writeOut?.(options.json ? `${JSON.stringify(view, null, 2)}\n` : formatStatus(id, view));
    },
  );
}
