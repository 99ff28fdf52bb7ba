// `node --import tsx bench/replay-cpu.ts [--replays N] [life...]`: what a lifecycle's workflow code costs a worker's
// workflow thread, with no server: each recorded life (test/replay/histories) replayed N times in one replay worker,
// bundled as the worker bundles it, as a Markdown table of CPU and promises per life. A replay runs the workflow code
// exactly as a live task does (the local activities' results come from their markers), so this is the workflow side
// of a worker's CPU per object, and what a cache eviction costs when the object wakes. The SDK takes a stack trace of
// every promise a workflow makes (for its stack-trace query), so promises are counted too.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promiseHooks } from 'node:v8';
import { Command } from 'commander';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { DefaultLogger, makeTelemetryFilterString, Runtime, Worker } from '@temporalio/worker';
import { bundleWorkflows, WORKFLOWS_PATH } from '../worker/bundle';

const HISTORIES = join(__dirname, '..', 'test', 'replay', 'histories');

interface LifeCost {
  life: string;
  events: number;
  replays: number;
  cpuMsPerLife: number;
  promisesPerLife: number;
}

async function main(): Promise<void> {
  const program = new Command('replay-cpu')
    .option('--replays <n>', 'replays of each life', (v) => Number.parseInt(v, 10), 300)
    .argument('[life...]', 'recorded lives (file names without .json); all when none')
    .parse();
  const { replays } = program.opts<{ replays: number }>();
  if (!Number.isInteger(replays) || replays < 1) program.error('error: --replays: a whole number above 0');
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
  for (const life of lives) {
    const json = JSON.parse(readFileSync(join(HISTORIES, `${life}.json`), 'utf8')) as { events: unknown[] };
    const histories = function* () {
      for (let i = 0; i < replays; i++) yield { workflowId: `replay-cpu/${life}/${i}`, history: historyFromJSON(json) };
    };
    promises = 0;
    const before = process.cpuUsage();
    for await (const { workflowId, error } of Worker.runReplayHistories({ workflowBundle }, histories()))
      if (error) throw new Error(`${workflowId} does not replay: ${String(error)}`);
    const { user, system } = process.cpuUsage(before);
    costs.push({
      life,
      events: json.events.length,
      replays,
      cpuMsPerLife: (user + system) / 1000 / replays,
      promisesPerLife: promises / replays,
    });
  }
  stopCounting();
  console.log('| life | events | replays | CPU per life (ms) | workflow promises per life |');
  console.log('| --- | ---: | ---: | ---: | ---: |');
  for (const c of costs)
    console.log(
      `| ${c.life} | ${c.events} | ${c.replays} | ${c.cpuMsPerLife.toFixed(1)} | ${c.promisesPerLife.toFixed(0)} |`,
    );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
