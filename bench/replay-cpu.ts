// `node --import tsx bench/replay-cpu.ts [--replays N] [life...]`: what a lifecycle's workflow code costs a worker's
// workflow thread, with no server: each recorded life (test/replay/histories) replayed N times in one replay worker,
// bundled as the worker bundles it, as a Markdown table of CPU and promises per life. A replay runs the workflow code
// exactly as a live task does (the local activities' results come from their markers), so this is the workflow side
// of a worker's CPU per object, and what a cache eviction costs when the object wakes. The SDK takes a stack trace of
// every promise a workflow makes (for its stack-trace query), so promises are counted too.
//
// `--stack-trace-limit 10,5`: each batch of replays runs in a replay worker created after V8's `--stack-trace-limit`
// is set to one of these (a new V8 context takes the flag: the frames the SDK's hook formats for each promise), the
// limits alternating over `--rounds` rounds in this one process, so that each is measured in the same conditions on
// a shared machine; a row per life and limit gives the median and range of the rounds.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promiseHooks, setFlagsFromString } from 'node:v8';
import { Command } from 'commander';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { DefaultLogger, makeTelemetryFilterString, Runtime, Worker } from '@temporalio/worker';
import { bundleWorkflows, WORKFLOWS_PATH } from '../worker/bundle';
import { median } from './stats';

const HISTORIES = join(__dirname, '..', 'test', 'replay', 'histories');

interface LifeCost {
  life: string;
  /** V8's --stack-trace-limit for the batch's context; undefined: Node's own (10). */
  stackTraceLimit?: number;
  events: number;
  replays: number;
  cpuMsPerLife: number;
  promisesPerLife: number;
}

async function main(): Promise<void> {
  const program = new Command('replay-cpu')
    .option('--replays <n>', 'replays of each life (in each round)', (v) => Number.parseInt(v, 10), 300)
    .option('--stack-trace-limit <n,...>', "V8's --stack-trace-limit for the workflow context, alternating", (v) =>
      v.split(',').map(Number),
    )
    .option('--rounds <n>', 'rounds of the limits, alternating', (v) => Number.parseInt(v, 10), 1)
    .argument('[life...]', 'recorded lives (file names without .json); all when none')
    .parse();
  const { replays, stackTraceLimit, rounds } = program.opts<{
    replays: number;
    stackTraceLimit?: number[];
    rounds: number;
  }>();
  if (!Number.isInteger(replays) || replays < 1) program.error('error: --replays: a whole number above 0');
  if (!Number.isInteger(rounds) || rounds < 1) program.error('error: --rounds: a whole number above 0');
  if (stackTraceLimit?.some((n) => !Number.isInteger(n) || n < 0))
    program.error('error: --stack-trace-limit: whole numbers, 0 or above');
  const limits: (number | undefined)[] = stackTraceLimit ?? [undefined];
  const all = readdirSync(HISTORIES)
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.slice(0, -'.json'.length));
  const lives = program.args.length > 0 ? program.args : all;
  const unknown = lives.filter((l) => !all.includes(l));
  if (unknown.length > 0) program.error(`error: no recorded life ${unknown.join(', ')} (there are: ${all.join(', ')})`);

  const logger = new DefaultLogger('ERROR');
  Runtime.install({ logger, telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) } } });
  const workflowBundle = await bundleWorkflows(WORKFLOWS_PATH, logger);
  // A workflow's promises are the sandbox's: their constructor is not this realm's Promise.
  let promises = 0;
  const stopCounting = promiseHooks.onInit((promise: Promise<unknown>) => {
    if (promise.constructor !== Promise) promises++;
  }) as () => void;
  const costs: LifeCost[] = [];
  // One batch untimed first when comparing (the JIT's warm-up), and the limits' order reversed every other round, so
  // that neither the warm-up nor a drift of the machine's load favours the limit that comes last.
  const batches: { life: string; limit: number | undefined; timed: boolean }[] = [];
  if (rounds > 1 || limits.length > 1) for (const life of lives) batches.push({ life, limit: limits[0], timed: false });
  for (let round = 0; round < rounds; round++)
    for (const life of lives)
      for (const limit of round % 2 ? [...limits].reverse() : limits) batches.push({ life, limit, timed: true });
  for (const { life, limit, timed } of batches) {
    if (limit !== undefined) setFlagsFromString(`--stack-trace-limit=${limit}`);
    const json = JSON.parse(readFileSync(join(HISTORIES, `${life}.json`), 'utf8')) as { events: unknown[] };
    const histories = function* () {
      for (let i = 0; i < replays; i++) yield { workflowId: `replay-cpu/${life}/${i}`, history: historyFromJSON(json) };
    };
    promises = 0;
    const before = process.cpuUsage();
    for await (const { workflowId, error } of Worker.runReplayHistories({ workflowBundle }, histories()))
      if (error) throw new Error(`${workflowId} does not replay: ${String(error)}`);
    const { user, system } = process.cpuUsage(before);
    if (timed)
      costs.push({
        life,
        stackTraceLimit: limit,
        events: json.events.length,
        replays,
        cpuMsPerLife: (user + system) / 1000 / replays,
        promisesPerLife: promises / replays,
      });
  }
  stopCounting();
  if (rounds === 1 && stackTraceLimit === undefined) {
    console.log('| life | events | replays | CPU per life (ms) | workflow promises per life |');
    console.log('| --- | ---: | ---: | ---: | ---: |');
    for (const c of costs)
      console.log(
        `| ${c.life} | ${c.events} | ${c.replays} | ${c.cpuMsPerLife.toFixed(1)} | ${c.promisesPerLife.toFixed(0)} |`,
      );
    return;
  }
  console.log(
    '| life | stack trace limit | events | replays × rounds | CPU per life (ms), median | range | each round | workflow promises per life |',
  );
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |');
  for (const life of lives)
    for (const limit of limits) {
      const runs = costs.filter((c) => c.life === life && c.stackTraceLimit === limit);
      const ms = runs.map((c) => c.cpuMsPerLife);
      const sorted = [...ms].sort((a, b) => a - b);
      const at = (i: number) => sorted[i] ?? Number.NaN;
      const middle = median(ms) ?? Number.NaN;
      const first = runs[0];
      console.log(
        `| ${life} | ${limit ?? "Node's (10)"} | ${first?.events} | ${replays} × ${rounds} | ${middle.toFixed(1)} | ` +
          `${at(0).toFixed(1)}–${at(sorted.length - 1).toFixed(1)} | ${ms.map((m) => m.toFixed(1)).join(', ')} | ` +
          `${first?.promisesPerLife.toFixed(0)} |`,
      );
    }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
