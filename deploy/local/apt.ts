import { commandExists, runLogged } from './process';
import { MissingPrerequisite, type Reporter, step } from './progress';

export interface DebianPackages {
  /** What they are, for the progress line and the error ("libvirt and QEMU"). */
  what: string;
  packages: readonly string[];
  report: Reporter;
  logFile: string;
  /** Another way out, added to the command in the error (e.g. a variable pointing at an existing server). */
  orElse?: string;
}

/**
 * Installs Debian packages the stack needs, the way a fresh machine gets them: with apt-get when run as root, else a
 * MissingPrerequisite naming the exact command. The caller checks first that they are missing.
 */
export async function installDebianPackages({
  what,
  packages,
  report,
  logFile,
  orElse,
}: DebianPackages): Promise<void> {
  const install = `apt-get install -y --no-install-recommends ${packages.join(' ')}`;
  if (process.getuid?.() !== 0 || !(await commandExists('apt-get'))) {
    throw new MissingPrerequisite(
      `Not installed: ${what}.`,
      `sudo apt-get update && sudo ${install}${orElse ? `   (${orElse})` : ''}`,
    );
  }
  await step(report, `install ${what} (apt-get: ${packages.join(' ')})`, async () => {
    const env = { DEBIAN_FRONTEND: 'noninteractive' };
    await runLogged('apt-get', ['update', '-q'], { step: 'apt-get update', logFile, env });
    await runLogged('apt-get', install.split(' ').slice(1), {
      step: `apt-get install ${packages.join(' ')}`,
      logFile,
      env,
    });
  });
}
