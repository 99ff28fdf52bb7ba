import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { stackInfo } from './jest/stack-info';
import { startTemporal } from './temporal';
import { testWorker } from './testing/temporal';
import { greetAfterSignal, greetOnce, proceed } from './testing/workflows';
import { stderrReporter } from './progress';

describe('Temporal dev server of the embedded stack', () => {
  it('runs a workflow with one activity to completion, and its history can be fetched', async () => {
    const { address } = stackInfo().temporal;
    const taskQueue = `stack-test-${Date.now()}`;
    const { client, worker, close } = await testWorker(address, taskQueue);
    try {
      const workflowId = `greet/${taskQueue}`;
      const result = await worker.runUntil(
        client.workflow.execute(greetOnce, { taskQueue, workflowId, args: ['stack'] }),
      );
      expect(result).toBe('hello, stack');
      const history = await client.workflow.getHandle(workflowId).fetchHistory();
      const types = (history.events ?? []).map((e) => e.eventType);
      // Enum values of EventType: 1 started, 10 activity scheduled, 12 activity completed, 2 completed.
      expect(types[0]).toBe(1);
      expect(types).toContain(10);
      expect(types).toContain(12);
      expect(types[types.length - 1]).toBe(2);
    } finally {
      await close();
    }
  });

  it('keeps a started workflow across a stop and restart of the server, which then completes', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'steward-temporal-'));
    const start = () => startTemporal({ stateDir, port: 0, uiPort: 0, report: stderrReporter });
    let server = await start();
    try {
      const workflowId = `greet-after-restart/${Date.now()}`;
      const taskQueue = 'restart-test';
      const connection = await Connection.connect({ address: server.address });
      await new Client({ connection }).workflow.start(greetAfterSignal, { taskQueue, workflowId, args: ['again'] });
      await connection.close();

      await server.process.stop();
      expect(server.process.running).toBe(false);
      server = await start();

      const { client, worker, close } = await testWorker(server.address, taskQueue);
      try {
        const handle = client.workflow.getHandle(workflowId);
        expect((await handle.describe()).status.name).toBe('RUNNING');
        await handle.signal(proceed);
        expect(await worker.runUntil(handle.result())).toBe('hello, again');
      } finally {
        await close();
      }
    } finally {
      await server.process.stop();
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});
