import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { cacheRoot, repoRoot } from './paths';
import { runLogged } from './process';
import { step, type Reporter } from './progress';

/**
 * The Node the image runs (deploy/image/Dockerfile's `FROM node:<major>-…`), for the unit tests: the checkout runs the
 * machine's Node (package.json `engines`), the image a newer major, and both must pass. Taken from the npm registry's
 * `node-<platform>-<arch>` package (the one the `node` package installs), since prebuilt downloads from nodejs.org are
 * not always reachable; pinned, so the cache is keyed by it. image-node.test.ts holds its major to the Dockerfile's.
 */
export const IMAGE_NODE_VERSION = '24.22.3';

/** The majors the Dockerfile's stages start from. */
export function dockerfileNodeMajors(dockerfile = join(repoRoot, 'deploy', 'image', 'Dockerfile')): number[] {
  return [...readFileSync(dockerfile, 'utf8').matchAll(/^FROM\s+node:(\d+)\b/gm)].map((m) => Number(m[1]));
}

/** The image's Node binary, installed once per machine under the cache. */
export async function ensureImageNode(report: Reporter): Promise<string> {
  const dir = join(cacheRoot, 'node', `node-v${IMAGE_NODE_VERSION}-${process.platform}-${process.arch}`);
  const binary = join(dir, 'bin', 'node');
  if (existsSync(binary)) return binary;
  const pkg = `node-${process.platform}-${process.arch}@${IMAGE_NODE_VERSION}`;
  return step(report, `install Node ${IMAGE_NODE_VERSION} (the image's) from npm (${pkg}) into ${dir}`, async () => {
    const staging = `${dir}.partial`;
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging, { recursive: true });
    const logFile = join(cacheRoot, 'logs', 'image-node.log');
    // npm pack checks the tarball against the registry's integrity hash.
    await runLogged('npm', ['pack', '--silent', pkg], { step: `npm pack ${pkg}`, logFile, cwd: staging });
    const tarball = `node-${process.platform}-${process.arch}-${IMAGE_NODE_VERSION}.tgz`;
    await runLogged('tar', ['xzf', tarball, '--strip-components=1'], { step: 'unpack Node', logFile, cwd: staging });
    rmSync(join(staging, tarball));
    renameSync(staging, dir);
    return binary;
  });
}
