// Replay of histories recorded from the end-to-end runs (test/e2e, test/e2e-objects, test/e2e-peerpods; STEWARD_RECORD_HISTORIES=1) against the current
// workflows: a change that would break the workflows already running fails here, with no server needed.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { bundleWorkflows, WORKFLOWS_PATH } from '../../worker/bundle';
import {
  DefaultLogger,
  makeTelemetryFilterString,
  Runtime,
  Worker,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';

const dir = join(__dirname, 'histories');
/** What each committed history covers; every file in histories/ must be listed, so none is replayed unexplained. */
// Recorded on the code of one workflow per object (issue 24), which retired every patch and every life recorded
// before it (Steward was never released). From the first release on, a change that alters a history is patched or
// versioned, and these keep replaying.
const cases: Record<string, string> = {
  synced: 'a Translation no object owns, created and pushed, still synced (waiting on its drift timer)',
  deleted: 'a Translation no object owns, created, synced, deleted: backend emptied, finalizer released, done',
  'stuck-retry': 'MidoNet down at creation: stuck after the bounded retries, then cleanup retry, synced',
  'stuck-orphan':
    'MidoNet down at deletion: stuck, then cleanup orphan, finalizer released with the resources recorded as orphaned',
  'object-pod-deleted':
    'a Pod whose workflow waited for its Node, then translated, applied and pushed its Translations in one local activity, then deleted: its Translations deleted from MidoNet and let go, back-reference removed, done',
  'object-node-ready':
    'a Node translated, applied and pushed in one local activity, its referrers told, then told again as its Pods changed; ready on its drift timer',
  'peerpod-libvirt-pod-deleted':
    'a peer pod: libvirt VM created and recorded in a PeerPod by one activity, Pod deleted: VM deleted, PeerPod released, done',
  'peerpod-aws-pod-deleted': 'the same on EC2 (the moto server)',
  'peerpod-libvirt-failure-path':
    'a PeerPod of cloud-api-adaptor tracked (its VM defined, never started: said shut off, not started), deleted by the garbage collector: its VM deleted from its fields, released',
  'peerpod-aws-failure-path': 'the same on EC2 (its VM running)',
  'peerpod-stuck-cleanup-retry':
    "libvirt unreachable at deletion: stuck after the bounded retries, an operator's cleanup retry failing the same, then woken by a worker started after libvirt's return: VM deleted, PeerPod released",
};

let bundle: WorkflowBundleWithSourceMap;
beforeAll(async () => {
  // Quiet: a nondeterminism shows in the failing case's error, not as core's warnings.
  const logger = new DefaultLogger('ERROR');
  Runtime.install({ logger, telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) } } });
  // Bundled as the worker bundles it (the machines and the translation preloaded, frozen and shared by every workflow):
  // one replay that writes into a frozen module fails here.
  bundle = await bundleWorkflows(WORKFLOWS_PATH, logger);
});

it('every recorded history has a case', () => {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .map((f) => f.replace(/\.json$/, ''))
    .sort();
  expect(files).toEqual(Object.keys(cases).sort());
});

it.each(Object.entries(cases))('replays %s: %s', async (name) => {
  const history = historyFromJSON(JSON.parse(readFileSync(join(dir, `${name}.json`), 'utf8')));
  await Worker.runReplayHistory({ workflowBundle: bundle }, history, `replay/${name}`);
});

// One worker, every history: the workflows share one V8 context and the preloaded modules, as on a real worker, so a
// workflow that left state in a shared module would make a later one replay differently.
it('replays every history in one worker', async () => {
  const histories = Object.keys(cases).map((name) => ({
    workflowId: `replay/${name}`,
    history: historyFromJSON(JSON.parse(readFileSync(join(dir, `${name}.json`), 'utf8'))),
  }));
  const failed: string[] = [];
  for await (const result of Worker.runReplayHistories({ workflowBundle: bundle }, histories))
    if (result.error) failed.push(`${result.workflowId}: ${result.error.message}`);
  expect(failed).toEqual([]);
});
