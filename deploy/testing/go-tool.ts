import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { inGoScratch } from '../local/go';
import { cacheRoot } from '../local/paths';
import { commandExists, runLogged } from '../local/process';
import { MissingPrerequisite, stderrReporter, step } from '../local/progress';
import { cachedTool } from '../local/tool-cache';

/** A command-line tool the deploy tests build from its Go module, e.g. kustomize or helm. */
export interface GoTool {
  /** The binary's name, also the cache folder's prefix. */
  name: string;
  /** The module path of its main package, without the version. */
  module: string;
  version: string;
  /**
   * A wrapper module in this repository (its go.mod and go.sum pin `module` at `version`) whose main package is built
   * instead: for a tool whose own main package cannot be installed by `go install` (kubectl's module has replace
   * directives). `ldflags` are its extra linker flags.
   */
  wrapper?: { dir: string; ldflags?: string[] };
}

/**
 * The tool's binary, built once with `go install` into `<cacheRoot>/<name>-<version>/bin` and cached by version like
 * the Kubernetes binaries, so a fresh machine (CI) needs only Go, not a package repository or a GitHub download.
 */
export async function ensureGoTool(tool: GoTool): Promise<string> {
  const label = `${tool.name} ${tool.version}`;
  const ready = (binDir: string) => existsSync(join(binDir, tool.name));
  const binDir = await cachedTool(
    join(cacheRoot, `${tool.name}-${tool.version}`, 'bin'),
    async (staging) => {
      if (!(await commandExists('go'))) {
        throw new MissingPrerequisite(
          `Go is needed once to build ${label}.`,
          'install Go >= 1.24 (official tarball into /usr/local/go, then PATH=/usr/local/go/bin:$PATH)',
        );
      }
      const { wrapper } = tool;
      const ldflags = ['-s -w', ...(wrapper?.ldflags ?? [])].join(' ');
      // GOTOOLCHAIN=local: a module asking for a newer Go fails here rather than downloading a toolchain.
      const settings = {
        GOBIN: staging,
        CGO_ENABLED: '0',
        GOTOOLCHAIN: 'local',
        ...(wrapper ? { GOFLAGS: '-mod=readonly' } : {}),
      };
      await step(stderrReporter, `build ${label} with go ${wrapper ? 'build' : 'install'}`, () =>
        inGoScratch(`${tool.name}-${tool.version}`, settings, (env) =>
          runLogged(
            'go',
            wrapper
              ? ['build', '-trimpath', '-ldflags', ldflags, '-o', join(staging, tool.name), '.']
              : ['install', '-trimpath', '-ldflags', ldflags, `${tool.module}@${tool.version}`],
            {
              step: `go ${wrapper ? 'build' : 'install'} ${tool.name}`,
              logFile: join(cacheRoot, 'logs', `${tool.name}-${tool.version}-build.log`),
              ...(wrapper ? { cwd: wrapper.dir } : {}),
              env,
            },
          ),
        ),
      );
    },
    { ready },
  );
  return join(binDir, tool.name);
}
