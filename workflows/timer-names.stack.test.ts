import { existsSync } from 'node:fs';
import { ApplicationFailure } from '@temporalio/common';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { chromium, type Browser } from 'playwright-core';
import { stackInfo } from '../deploy/local/jest/stack-info';
import { translationLifecycle } from './index';
import { observedSignal, refreshUpdate, stateQuery, type Observation } from '../model/messages';
import type { TranslationProjection } from '../model/translation/types';
import { executeUpdateWhenReady } from '../platform/temporal-update';

/** Debian's Chromium, which playwright-core drives (it brings no browser of its own). */
const CHROMIUM = '/usr/bin/chromium';

/**
 * Timers are named for what they wait for, and the real Temporal UI shows those names instead of `1 (28m)`: a
 * pusher workflow is pushed (its drift timer starts), refreshed (the drift timer is cancelled) and its second push
 * fails (its stuck retry timer starts), with partial fakes for the two activities it calls; then headless Chromium
 * opens the workflow's page in the stack's Temporal UI.
 */
describe('timer names in the Temporal UI', () => {
  const { address, uiUrl } = stackInfo().temporal;
  const taskQueue = `timer-names-${Date.now()}`;
  const ref = { kind: 'Translation' as const, namespace: 'default', name: `timers-${Date.now()}` };
  let connection: Connection;
  let nativeConnection: NativeConnection;
  let client: Client;
  let worker: Worker;
  let running: Promise<void>;
  let browser: Browser;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install it with apt-get install -y chromium`);
    if (!uiUrl)
      throw new Error('the stack runs no Temporal UI (a Temporal service given by TEMPORAL_ADDRESS has none of ours)');
    nativeConnection = await NativeConnection.connect({ address });
    connection = await Connection.connect({ address });
    client = new Client({ connection });
    let pushes = 0;
    worker = await Worker.create({
      connection: nativeConnection,
      taskQueue,
      workflowsPath: require.resolve('./index'),
      activities: {
        pushTranslation: () => {
          pushes += 1;
          if (pushes > 1) throw ApplicationFailure.nonRetryable('MidoNet said no', 'MidonetValidation');
          return Promise.resolve({ pushed: [], removed: [], recreated: [] });
        },
        recordTranslationStatus: () => Promise.resolve({ found: false }),
      },
    });
    running = worker.run();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  });

  afterAll(async () => {
    await browser?.close();
    worker?.shutdown();
    await running;
    await connection?.close();
    await nativeConnection?.close();
  });

  it('shows each timer of a workflow by the name of what it waits for', async () => {
    const observation: Observation<TranslationProjection> = {
      ref,
      uid: 'u1',
      generation: 1,
      deleting: false,
      gone: false,
      finalizers: ['midonet.org/deleter'],
      projection: { resources: [] },
    };
    const handle = await client.workflow.signalWithStart(translationLifecycle, {
      taskQueue,
      workflowId: `translation/${ref.namespace}/${ref.name}`,
      args: [{ ref, timings: { stuckRetryMs: 60 * 60_000 } }],
      signal: observedSignal,
      signalArgs: [observation],
    });
    const stateIs = async (state: string) => {
      for (let i = 0; i < 100 && (await handle.query(stateQuery)).state !== state; i++)
        await new Promise((resolve) => setTimeout(resolve, 200));
      expect((await handle.query(stateQuery)).state).toBe(state);
    };
    await stateIs('synced');
    await executeUpdateWhenReady(handle, refreshUpdate, {
      requestedBy: 'timer-names test',
      reason: 'cancel the drift timer, fail the push',
    });
    await stateIs('stuck');

    const page = await browser.newPage();
    const { runId } = await handle.describe();
    // The timeline labels each timer with its summary (instead of `1 (1h)`); the event history shows it under the
    // Timer Started / Timer Canceled event. Exact, so that the input's `stuckRetryMs` does not count.
    for (const tab of ['timeline', 'history']) {
      await page.goto(`${uiUrl}/namespaces/default/workflows/${encodeURIComponent(handle.workflowId)}/${runId}/${tab}`);
      for (const name of ['driftCheck', 'stuckRetry'])
        await page.getByText(name, { exact: true }).first().waitFor({ timeout: 30_000 });
    }
    await handle.terminate('timer names checked');
  });
});
