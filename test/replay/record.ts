import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';

/**
 * With `STEWARD_RECORD_HISTORIES=1`, an end-to-end run writes a workflow's history as a replay fixture
 * (test/replay/histories/<name>.json); replay.test.ts then replays every fixture against the current workflows.
 */
export async function recordHistory(client: Client, workflowId: string, name: string): Promise<void> {
  if (process.env.STEWARD_RECORD_HISTORIES !== '1') return;
  const dir = join(__dirname, 'histories');
  mkdirSync(dir, { recursive: true });
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  writeFileSync(join(dir, `${name}.json`), `${JSON.stringify(JSON.parse(historyToJSON(history)), null, 2)}\n`);
}
