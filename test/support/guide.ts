// A guide of docs/ run as written, for the guides' stack tests: every fenced `sh <step>` block, by bash, with a real
// kubectl (k8s.io/kubectl at the stack's release) and `steward` (bin/steward.cjs) on PATH as a user has them.
// `untested:<why>` blocks are left to another test. A test names each block it runs, so the guide and its test
// cannot drift: a block the test does not know, or runs out of order, fails its last case.
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '../../deploy/local/paths';
import { ensureKubectl } from '../../deploy/testing/kubectl';
import { uninstall } from '../../cli/uninstall';
import { POLLER_WINDOW_MS } from '../../cli/pollers';
import { waitFor } from '.';

const run = promisify(execFile);

/** The guide's `sh` blocks by step, in order. */
export function guideBlocks(file: string): { step: string; script: string }[] {
  const blocks = [...readFileSync(file, 'utf8').matchAll(/^( *)```sh ([\w:-]+)\n([\s\S]*?)^\1```$/gm)];
  return blocks.map(([, indent, step, body]) => ({
    step: step!,
    script: body!
      .split('\n')
      .map((line) => line.slice(indent!.length))
      .join('\n'),
  }));
}

/** A bin folder with `kubectl`, `steward` and `more` (name → binary, e.g. helm) as a user has them on PATH. */
export async function userPath(more: Record<string, string> = {}): Promise<string> {
  const bin = mkdtempSync(join(tmpdir(), 'steward-guide-'));
  symlinkSync(await ensureKubectl(), join(bin, 'kubectl'));
  for (const [name, binary] of Object.entries(more)) symlinkSync(binary, join(bin, name));
  writeFileSync(
    join(bin, 'steward'),
    `#!/bin/sh\nexec "${process.execPath}" "${join(repoRoot, 'bin', 'steward.cjs')}" "$@"\n`,
  );
  chmodSync(join(bin, 'steward'), 0o755);
  return bin;
}

export interface GuideRunner {
  /** Runs one block by its step name, as a user pastes it into bash (from the repository's root); its output. */
  step(name: string): Promise<string>;
  /** The steps run so far, in order. */
  ran: string[];
  /** The guide's blocks but the `untested:` ones, in order: what `ran` must be at the end. */
  tested(): string[];
}

/** Runs the blocks of `file` with `env()` (read at each step: the test sets it up in its beforeAll). */
export function guideRunner(file: string, env: () => NodeJS.ProcessEnv): GuideRunner {
  const ran: string[] = [];
  const relative = file.slice(repoRoot.length + 1);
  return {
    ran,
    tested: () =>
      guideBlocks(file)
        .map((b) => b.step)
        .filter((b) => !b.startsWith('untested:')),
    async step(name) {
      const block = guideBlocks(file).find((b) => b.step === name);
      if (!block) throw new Error(`${relative} has no \`sh ${name}\` block`);
      ran.push(name);
      try {
        const { stdout, stderr } = await run('bash', ['-euo', 'pipefail', '-c', block.script], {
          cwd: repoRoot,
          env: env(),
          maxBuffer: 16 * 1024 * 1024,
        });
        return stdout + stderr;
      } catch (error) {
        const { stdout, stderr } = error as { stdout?: string; stderr?: string };
        throw new Error(`step ${name} failed:\n${block.script}\n${stdout ?? ''}${stderr ?? ''}`);
      }
    },
  };
}

/** A stopped worker stays in Temporal's list of pollers for a while: `steward uninstall` refuses until then. */
export async function untilUninstallAllowed(env: NodeJS.ProcessEnv): Promise<void> {
  const flags = { kubeconfig: env.KUBECONFIG!, address: env.TEMPORAL_ADDRESS!, dryRun: true };
  await waitFor(
    'no worker polling',
    async () => !(await uninstall(flags)).wouldRefuse,
    POLLER_WINDOW_MS + 60_000,
    5_000,
  );
}
