import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { SingleBar } from 'cli-progress';
import type { Command } from 'commander';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { loadTemporalConfig, temporalSettings } from '../platform/temporal-config';
import { connectClient } from '../platform/temporal-connection';
import { addSettingFlags, duration, type Flags } from '../platform/settings';
import { sweepProgressQuery } from '../model/messages';
import { inCluster, manualSweepId } from '../model/naming';
import type { sweep } from '../workflows/sweep';
import {
  CAA_LEAK_MODES,
  REPORT_HEADER,
  reportRows,
  SWEEP_BACKENDS,
  type SweepProgress,
  type SweepReport,
} from '../model/sweep-report';
import { backendList } from '../starter/sweep-schedule';
import { UsageError } from './errors';
import { checkFlags } from './object-flags';
import { readTenant, tenantSettings } from './tenant';
import { table } from './operator';
import { outputOf, outputOption, serialize } from './output';

/**
 * `steward sweep`: runs the orphan sweeper now (`gc/sweep/manual-<time>`, the Schedule's workflow), draws its
 * progress (a bar on a terminal, plain lines otherwise, both on stderr), prints its report and exits 1 when a
 * backend could not be swept.
 */

const POLL_MS = 500;

const sweepFlags = z.object({
  dryRun: z.boolean().default(false),
  grace: duration.default(10 * 60_000),
  sweepBackends: backendList.default([...SWEEP_BACKENDS]),
  caaLeaks: z.enum(CAA_LEAK_MODES, { error: `must be one of ${CAA_LEAK_MODES.join(', ')}` }).default('report'),
});

const phaseText: Record<SweepProgress['phase'], string> = {
  listing: 'listing the backends',
  waiting: 'grace period',
  checking: 'checking again',
  deleting: 'deleting orphans',
  done: 'done',
};

/** Progress on stderr: a redrawn bar on a terminal, one line per change otherwise (logs, CI, tests). */
function progressDisplay(stream: NodeJS.WriteStream) {
  let last = '';
  if (!stream.isTTY) {
    return {
      show(p: SweepProgress) {
        const line =
          p.phase === 'waiting'
            ? `${phaseText.waiting} until ${p.waitUntil}`
            : p.phase === 'done'
              ? phaseText.done
              : `${phaseText[p.phase]} ${p.done}/${p.total}`;
        if (line !== last) stream.write(`${line}\n`);
        last = line;
      },
      stop: () => undefined,
    };
  }
  const bar = new SingleBar({
    stream,
    format: '{phase} [{bar}] {value}/{total}',
    hideCursor: true,
    clearOnComplete: false,
  });
  bar.start(1, 0, { phase: phaseText.listing });
  return {
    show(p: SweepProgress) {
      const waited =
        p.phase === 'waiting' && p.waitUntil
          ? Math.max(0, p.total - Math.ceil((Date.parse(p.waitUntil) - Date.now()) / 1000))
          : p.done;
      bar.setTotal(Math.max(p.total, 1));
      bar.update(p.phase === 'done' ? Math.max(p.total, 1) : waited, { phase: phaseText[p.phase] });
    },
    stop: () => bar.stop(),
  };
}

/** Polls the progress query until the workflow ends; resolves the report, or rejects with the failure. */
async function follow(
  handle: WorkflowHandle<typeof sweep>,
  display: ReturnType<typeof progressDisplay>,
): Promise<SweepReport> {
  let ended = false;
  const result = handle.result().finally(() => (ended = true));
  const settled = result.then(
    () => undefined,
    () => undefined,
  );
  while (!ended) {
    // A query can fail while the first workflow task is not done yet; the next poll tries again.
    await handle.query(sweepProgressQuery).then(
      (p) => display.show(p),
      () => undefined,
    );
    await Promise.race([sleep(POLL_MS), settled]);
  }
  display.show({ phase: 'done', total: 0, done: 0 });
  display.stop();
  return result;
}

export function formatReport(id: string, report: SweepReport): string {
  const lines = [
    `${id}${report.dryRun ? ' (dry run: nothing deleted)' : ''}, grace period ${report.graceMs / 1000}s`,
    table(REPORT_HEADER, reportRows(report)),
  ];
  for (const b of report.backends.filter((b) => b.orphans.length)) {
    lines.push(
      '',
      `${report.dryRun ? 'would delete' : b.outcome === 'dryRun' ? 'found, not deleted (deletion not switched on)' : 'orphans'} (${b.backend})`,
      table(
        ['KIND', 'ID', 'NAME', 'POD'],
        b.orphans.map((o) => [o.kind, o.id, o.name ?? '', o.pod ?? '']),
      ),
    );
  }
  return `${lines.join('\n')}\n`;
}

export function registerSweepCommand(program: Command): void {
  const command = program
    .command('sweep')
    .description(
      "run the orphan sweeper now: delete the VMs and MidoNet objects of Steward's that nothing records, after a grace period",
    )
    .option('--dry-run', 'report what would be deleted, delete nothing')
    .option(
      '--grace <duration>',
      'how long a resource must stay unrecorded before it is deleted, e.g. 0, 90s, 10m (default 10m)',
    )
    .option(
      '--sweep-backends <list>',
      `what to sweep, comma-separated: ${SWEEP_BACKENDS.join(', ')} (default all), as the starter's --sweep-backends`,
    )
    // Not --backends: everywhere else that is what an installation drives (midonet, peerpods), another vocabulary.
    .option('--backends <list>', 'deprecated: use --sweep-backends')
    .option(
      '--caa-leaks <mode>',
      "cloud-api-adaptor's VMs no PeerPod or Pod records (with the cloud backend): report, delete or off (default report)",
    )
    .addOption(outputOption(['json', 'yaml', 'jsonpath'], 'the report as'))
    .option('--json', 'deprecated: use -o json');
  addSettingFlags(addSettingFlags(command, tenantSettings), temporalSettings).action(
    async (options: Flags & { json?: boolean }, self: Command) => {
      if (options.json) process.stderr.write('warning: --json is deprecated: use -o json\n');
      if (options.backends) process.stderr.write('warning: --backends is deprecated: use --sweep-backends\n');
      const {
        grace,
        sweepBackends: backends,
        dryRun,
        caaLeaks,
      } = checkFlags(sweepFlags, { ...options, sweepBackends: options.sweepBackends ?? options.backends });
      const tenant = readTenant(options);
      const output = outputOf(options) ?? (options.json ? 'json' : undefined);
      if (backends.length === 0) throw new UsageError('--sweep-backends: none leaves nothing to sweep');
      const temporal = loadTemporalConfig(options);
      const client = await connectClient(temporal);
      try {
        const id = inCluster(manualSweepId(new Date()), temporal.clusterId);
        const handle = await client.workflow.start<typeof sweep>('sweep', {
          workflowId: id,
          taskQueue: temporal.taskQueue,
          args: [{ graceMs: grace, dryRun, backends, tenant, caaLeaks }],
          staticSummary: `Orphan sweep (manual${dryRun ? ', dry run' : ''})`,
        });
        process.stderr.write(`${id} started\n`);
        const out = (text: string) => self.configureOutput().writeOut?.(text);
        try {
          const report = await follow(handle, progressDisplay(process.stderr));
          out(serialize(report, output) ?? formatReport(id, report));
        } catch (error) {
          const cause = error instanceof WorkflowFailedError ? error.cause : undefined;
          if (cause instanceof ApplicationFailure && cause.type === 'SweepIncomplete') {
            const report = cause.details?.[0] as SweepReport;
            out(serialize(report, output) ?? formatReport(id, report));
            throw new Error(`${id} incomplete: ${cause.message}`);
          }
          throw new Error(
            `${id} failed: ${cause?.message ?? (error instanceof Error ? error.message : String(error))}`,
          );
        }
      } finally {
        await client.connection.close();
      }
    },
  );
}
