import { readFileSync } from 'node:fs';

/**
 * Progress for provisioning steps that can take minutes (building Kubernetes): what runs, for how long, and, on
 * failure, the step, the end of its log and the command that reproduces it.
 */
export class ProvisionError extends Error {
  constructor(
    readonly step: string,
    readonly detail: string,
    readonly logFile?: string,
    readonly reproduce?: string,
  ) {
    super(formatFailure(step, detail, logFile, reproduce));
    this.name = 'ProvisionError';
  }
}

/** A missing tool or permission: the message says exactly what to install or run. */
export class MissingPrerequisite extends Error {
  constructor(what: string, fix: string) {
    super(`${what}\n  fix: ${fix}`);
    this.name = 'MissingPrerequisite';
  }
}

function formatFailure(step: string, detail: string, logFile?: string, reproduce?: string): string {
  const lines = [`step failed: ${step}`, `  ${detail}`];
  if (logFile) {
    lines.push(`  last lines of ${logFile}:`, ...tail(logFile, 25).map((l) => `    | ${l}`));
  }
  if (reproduce) lines.push(`  reproduce with: ${reproduce}`);
  return lines.join('\n');
}

function tail(file: string, count: number): string[] {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-count);
  } catch {
    return ['(no log written)'];
  }
}

export type Reporter = (line: string) => void;
export const stderrReporter: Reporter = (line) => process.stderr.write(`${line}\n`);

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)}s`;

/** Runs one named step, printing its start, a heartbeat every `tickMs` while it runs, and its duration. */
export async function step<T>(report: Reporter, name: string, run: () => Promise<T>, tickMs = 15_000): Promise<T> {
  const started = Date.now();
  report(`▸ ${name}`);
  const ticker = setInterval(() => report(`  … ${name} (${seconds(Date.now() - started)})`), tickMs);
  try {
    const result = await run();
    report(`✓ ${name} (${seconds(Date.now() - started)})`);
    return result;
  } catch (error) {
    report(`✗ ${name} (${seconds(Date.now() - started)})`);
    throw error;
  } finally {
    clearInterval(ticker);
  }
}
