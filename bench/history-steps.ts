// `node --import tsx bench/history-steps.ts <history.json>...`: a workflow history cut into its steps, one row per
// workflow task (what woke it, the task's own three events, the commands it gave), as a Markdown table. Temporal's
// server CPU follows history events, so this is where a lifecycle's cost is read step by step. It reads histories as
// the replay test records them and as `temporal workflow show --output json` prints them.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

interface HistoryEvent {
  eventType: string;
  [attributes: string]: unknown;
}

export interface HistoryStep {
  /** What brought the step on: the start, a signal, a timer, an activity's result. */
  wokenBy: string[];
  /** The workflow task's own events (scheduled, started, completed), 3 unless it failed or timed out. */
  task: number;
  /** What the task decided: activities scheduled, local-activity markers, timers, upserts, the completion. */
  commands: string[];
}

const TASK = /^WORKFLOW_TASK_/;
const COMMANDS = new Set([
  'ACTIVITY_TASK_SCHEDULED',
  'ACTIVITY_TASK_CANCEL_REQUESTED',
  'MARKER_RECORDED',
  'TIMER_STARTED',
  'TIMER_CANCELED',
  'UPSERT_WORKFLOW_SEARCH_ATTRIBUTES',
  'WORKFLOW_PROPERTIES_MODIFIED',
  'WORKFLOW_EXECUTION_COMPLETED',
  'WORKFLOW_EXECUTION_CONTINUED_AS_NEW',
  'WORKFLOW_EXECUTION_FAILED',
  'WORKFLOW_EXECUTION_UPDATE_ACCEPTED',
  'WORKFLOW_EXECUTION_UPDATE_COMPLETED',
  'SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED',
  'START_CHILD_WORKFLOW_EXECUTION_INITIATED',
]);

/** `EVENT_TYPE_TIMER_STARTED` and `TimerStarted` alike, as `TIMER_STARTED`. */
const typeOf = (event: HistoryEvent) =>
  event.eventType
    .replace(/^EVENT_TYPE_/, '')
    .replace(/([a-z])([A-Z])/g, '$1_$2')
    .toUpperCase();

/** The event in a few words: its type and the name it carries (activity, marker, signal, timer). */
function describe(event: HistoryEvent): string {
  const type = typeOf(event);
  const attributes = Object.entries(event).find(([key]) => key.endsWith('Attributes'))?.[1] as
    | Record<string, unknown>
    | undefined;
  const name =
    (attributes?.activityType as { name?: string } | undefined)?.name ??
    localActivityOf(attributes) ??
    (attributes?.markerName as string | undefined) ??
    (attributes?.signalName as string | undefined) ??
    (type === 'TIMER_STARTED' ? summaryOf(event) : undefined) ??
    (type === 'UPSERT_WORKFLOW_SEARCH_ATTRIBUTES' ? upsertedOf(attributes) : undefined);
  return name ? `${type} (${name})` : type;
}

/** A local activity's marker: its activity type, from the JSON core writes in the marker's `data`. */
function localActivityOf(attributes: Record<string, unknown> | undefined): string | undefined {
  if (attributes?.markerName !== 'core_local_activity') return undefined;
  const details = attributes.details as { data?: { payloads?: { data?: string }[] } } | undefined;
  const data = details?.data?.payloads?.[0]?.data;
  if (!data) return undefined;
  try {
    const type = (JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as { activity_type?: string }).activity_type;
    return type && `local ${type}`;
  } catch {
    return undefined;
  }
}

/** A command's summary (what Steward names its timers by), a JSON string in the event's user metadata. */
function summaryOf(event: HistoryEvent): string | undefined {
  const data = (event.userMetadata as { summary?: { data?: string } } | undefined)?.summary?.data;
  return data === undefined ? undefined : (JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as string);
}

/** The search attributes an upsert wrote. */
function upsertedOf(attributes: Record<string, unknown> | undefined): string | undefined {
  const fields = (attributes?.searchAttributes as { indexedFields?: Record<string, unknown> } | undefined)
    ?.indexedFields;
  return fields && Object.keys(fields).join(', ');
}

export function historySteps(events: readonly HistoryEvent[]): HistoryStep[] {
  const steps: HistoryStep[] = [];
  let waiting: string[] = [];
  for (const event of events) {
    const type = typeOf(event);
    const current = steps.at(-1);
    if (type === 'WORKFLOW_TASK_SCHEDULED') {
      steps.push({ wokenBy: waiting, task: 1, commands: [] });
      waiting = [];
    } else if (TASK.test(type) && current) current.task += 1;
    else if (COMMANDS.has(type) && current) current.commands.push(describe(event));
    else waiting.push(describe(event));
  }
  // What came after the last task (an activity still running) wakes nothing yet.
  if (waiting.length > 0) steps.push({ wokenBy: waiting, task: 0, commands: [] });
  return steps;
}

export const stepEvents = (step: HistoryStep) => step.wokenBy.length + step.task + step.commands.length;

export function stepsTable(title: string, steps: readonly HistoryStep[]): string {
  const total = steps.reduce((sum, step) => sum + stepEvents(step), 0);
  const rows = steps.map(
    (step, i) =>
      `| ${i + 1} | ${step.wokenBy.join(', ') || '—'} | ${step.task} | ${step.commands.join(', ') || '—'} | ${stepEvents(step)} |`,
  );
  return [
    `### ${title}: ${total} events`,
    '',
    '| step | woken by | task | commands | events |',
    '|---:|---|---:|---|---:|',
    ...rows,
    '',
  ].join('\n');
}

if (require.main === module) {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    process.stderr.write('usage: node --import tsx bench/history-steps.ts <history.json>...\n');
    process.exit(2);
  }
  for (const file of files) {
    const { events } = JSON.parse(readFileSync(file, 'utf8')) as { events: HistoryEvent[] };
    process.stdout.write(`${stepsTable(basename(file, '.json'), historySteps(events))}\n`);
  }
}
