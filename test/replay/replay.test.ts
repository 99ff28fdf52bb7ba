// Replay of histories recorded from the end-to-end runs (test/e2e, test/e2e-objects, test/e2e-peerpods; STEWARD_RECORD_HISTORIES=1) against the current
// workflows: a change that would break the workflows already running fails here, with no server needed.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { workflowBundlerOptions } from '../../worker/bundle';
import {
  bundleWorkflowCode,
  DefaultLogger,
  makeTelemetryFilterString,
  Runtime,
  Worker,
  type WorkflowBundleWithSourceMap,
} from '@temporalio/worker';
import { KNOWN_PATCHES } from '../../model/patches';

const dir = join(__dirname, 'histories');
/** What each committed history covers; every file in histories/ must be listed, so none is replayed unexplained. */
const cases: Record<string, string> = {
  synced: 'a Translation created and pushed, still synced (waiting on its drift timer)',
  deleted: 'a Translation created, synced, deleted: backend emptied, finalizer released, done',
  'stuck-retry': 'MidoNet down at creation: stuck after the bounded retries, then cleanup retry, synced',
  'stuck-orphan':
    'MidoNet down at deletion: stuck, then cleanup orphan, finalizer released with the resources recorded as orphaned',
  'peerpod-libvirt-pod-deleted':
    'a peer pod: libvirt VM created, PeerPod written, Pod deleted: VM deleted, PeerPod released, done',
  'peerpod-aws-pod-deleted': 'the same on EC2 (the moto server)',
  'peerpod-libvirt-failure-path':
    'a PeerPod of cloud-api-adaptor tracked, deleted by the garbage collector: its VM deleted from its fields, released',
  'peerpod-aws-failure-path': 'the same on EC2',
  'peerpod-stuck-cleanup-retry':
    'libvirt unreachable at deletion: stuck after the bounded retries, then cleanup retry, VM deleted, PeerPod released',
  // The same lives recorded after the lean-history patch (LifecycleState where the machine rests, one applyObject, kept drift timers).
  'lean-deleted': 'deleted, with the lean-history patch',
  'lean-stuck-retry': 'stuck-retry, with the lean-history patch',
  'lean-stuck-orphan': 'stuck-orphan, with the lean-history patch',
  'lean-peerpod-libvirt-pod-deleted': 'peerpod-libvirt-pod-deleted, with the lean-history patch',
  'lean-peerpod-stuck-cleanup-retry': 'peerpod-stuck-cleanup-retry, with the lean-history patch',
  // The same lives as the starter starts them since workflows/patches.ts: the first observation and the patches in the input, no patch marker.
  'listed-synced': 'synced, started with its observation and the patches listed',
  'listed-deleted': 'deleted, started with its observation and the patches listed',
  'listed-peerpod-libvirt-pod-deleted':
    'peerpod-libvirt-pod-deleted, started with its observation and the patches listed',
  'listed-peerpod-aws-pod-deleted': 'peerpod-aws-pod-deleted, started with its observation and the patches listed',
  'listed-peerpod-libvirt-failure-path':
    'peerpod-libvirt-failure-path, started with its observation and the patches listed',
  'listed-peerpod-aws-failure-path': 'peerpod-aws-failure-path, started with its observation and the patches listed',
  'listed-peerpod-stuck-cleanup-retry':
    'peerpod-stuck-cleanup-retry, started with its observation and the patches listed',
  // Objects since one workflow per object (issue 24): the object's own workflow pushes its Translations; the lives
  // recorded before it are retired (Steward was never released).
  'object-pod-deleted':
    'a Pod whose workflow waited for its Node, then translated, applied and pushed its Translations in one local activity, then deleted: its Translations deleted from MidoNet and let go, back-reference removed, done',
  'object-node-ready':
    'a Node translated, applied and pushed in one local activity, its referrers told, then told again as its Pods changed; ready on its drift timer',
  // Peer pods since peerpod-create-and-record: the foreign-PeerPod check, the VM create and the PeerPod record in one activity.
  'one-create-peerpod-libvirt-pod-deleted': 'peerpod-libvirt-pod-deleted, the VM created and recorded by one activity',
  'one-create-peerpod-aws-pod-deleted': 'peerpod-aws-pod-deleted, the VM created and recorded by one activity',
  'one-create-peerpod-stuck-cleanup-retry': 'peerpod-stuck-cleanup-retry, the VM created and recorded by one activity',
};

let bundle: WorkflowBundleWithSourceMap;
beforeAll(async () => {
  // Quiet: a nondeterminism shows in the failing case's error, not as core's warnings.
  const logger = new DefaultLogger('ERROR');
  Runtime.install({ logger, telemetryOptions: { logging: { filter: makeTelemetryFilterString({ core: 'ERROR' }) } } });
  // Bundled as the worker bundles it (the machines and the translation preloaded, frozen and shared by every workflow):
  // one replay that writes into a frozen module fails here.
  bundle = await bundleWorkflowCode({
    workflowsPath: require.resolve('../../workflows'),
    logger,
    ...workflowBundlerOptions,
  });
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

/**
 * During a rolling update a new starter starts workflows with the patches in their input (workflows/patches.ts) that
 * an old worker may run, recording the markers as it always did: the lives recorded with the lean-history patch,
 * their input given the list, stand for such histories and must replay.
 */
// The list as the first starter to give one gave it: the old worker knew these (a later patch it did not know would fail its task).
const FIRST_LISTED = KNOWN_PATCHES.slice(0, 5);

it.each(Object.keys(cases).filter((name) => name.startsWith('lean-')))(
  'replays %s started with the patches listed in its input',
  async (name) => {
    const json = JSON.parse(readFileSync(join(dir, `${name}.json`), 'utf8')) as {
      events: { workflowExecutionStartedEventAttributes?: { input: { payloads: { data: string }[] } } }[];
    };
    const started = json.events[0]!.workflowExecutionStartedEventAttributes!.input.payloads[0]!;
    const input = JSON.parse(Buffer.from(started.data, 'base64').toString()) as Record<string, unknown>;
    started.data = Buffer.from(JSON.stringify({ ...input, patches: FIRST_LISTED })).toString('base64');
    await Worker.runReplayHistory({ workflowBundle: bundle }, historyFromJSON(json), `replay/${name}-listed`);
  },
);

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
