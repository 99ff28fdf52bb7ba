// The container image without Docker (Docker Hub is out of reach here): the files deploy/image/Dockerfile copies,
// less what .dockerignore leaves out, hold no development stack, test or benchmark; the production commands, run from
// exactly those files, load every module they need and nothing of deploy/local; `steward up` and `steward demo` there
// fail with a sentence, not a stack trace.
import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';
import { IMAGE_ENTRYPOINT } from './build';
import { PROCESS_ENV } from '../local/worker-process';

const repoRoot = join(__dirname, '..', '..');
const dockerfile = readFileSync(join(repoRoot, 'deploy', 'image', 'Dockerfile'), 'utf8');
const work = mkdtempSync(join(tmpdir(), 'steward-image-test-'));

/** The `.dockerignore` patterns as regular expressions; only the syntax it uses (no `!` exceptions) is supported. */
function ignorePatterns(): RegExp[] {
  const lines = readFileSync(join(repoRoot, '.dockerignore'), 'utf8')
    .split('\n')
    .map((line) => line.trim());
  return lines
    .filter((line) => line && !line.startsWith('#'))
    .map((pattern) => {
      if (pattern.startsWith('!')) throw new Error(`this test does not read exception patterns: ${pattern}`);
      const source = pattern
        .replace(/^\/+|\/+$/g, '')
        .split(/(\*\*\/|\*\*|\*|\?)/)
        .map(
          (part) =>
            ({ '**/': '(?:.*/)?', '**': '.*', '*': '[^/]*', '?': '[^/]' })[part] ??
            part.replace(/[.+^${}()|[\]\\]/g, '\\$&'),
        )
        .join('');
      return new RegExp(`^${source}$`);
    });
}

/** Repository paths the image gets: each COPY source, file or folder, without what a pattern matches (or a parent of it). */
function imageFiles(): string[] {
  const ignored = ignorePatterns();
  const excluded = (path: string) =>
    path.split('/').some((_, i, parts) => ignored.some((re) => re.test(parts.slice(0, i + 1).join('/'))));
  const sources = [...dockerfile.matchAll(/^COPY\s+(?!--from)(.+)$/gm)].flatMap(([, args]) =>
    args!.trim().split(/\s+/).slice(0, -1),
  );
  const files = sources.flatMap((source) => {
    const path = join(repoRoot, source);
    if (!statSync(path).isDirectory()) return [source];
    return readdirSync(path, { recursive: true, encoding: 'utf8' })
      .map((entry) => `${source}/${entry}`)
      .filter((file) => statSync(join(repoRoot, file)).isFile());
  });
  return files.filter((file) => !excluded(file));
}

/** Records every module the process loaded, at its exit, in the file its environment names. */
const recorder = join(work, 'record-modules.cjs');
writeFileSync(
  recorder,
  "process.on('exit', () => require('node:fs').writeFileSync(process.env.STEWARD_LOADED_MODULES, JSON.stringify(Object.keys(require.cache))));\n",
);

async function steward(
  root: string,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string; loaded: string[] }> {
  const record = join(work, `loaded-${Math.random().toString(36).slice(2)}.json`);
  const env = { ...process.env, STEWARD_LOADED_MODULES: record };
  const result = await promisify(execFile)(
    process.execPath,
    ['--require', recorder, join(root, 'bin', 'steward.cjs'), ...args],
    { cwd: root, env },
  ).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({
      code: error.code,
      stdout: error.stdout,
      stderr: error.stderr,
    }),
  );
  const loaded = (JSON.parse(readFileSync(record, 'utf8')) as string[])
    .map((file) => relative(root, file))
    .filter((file) => !file.startsWith('..') && !file.startsWith('node_modules/'));
  return { ...result, loaded };
}

const productionCommands = [
  ['--help'],
  ['worker', '--help'],
  ['starter', '--help'],
  ['status', '--help'],
  ['sweep', '--help'],
].map((args) => [args.join(' '), args] as const);

describe('the image', () => {
  const files = imageFiles();

  it('holds no development stack, test, testing helper or benchmark, and the sources production runs', () => {
    expect(files.filter((file) => /^(deploy|test|bench)\/|\.test\.ts$|(^|\/)testing\//.test(file))).toEqual([]);
    expect(files).toEqual(
      expect.arrayContaining([
        'bin/steward.cjs',
        'cli/main.ts',
        'worker/index.ts',
        'workflows/index.ts',
        'package-lock.json',
        'tsconfig.json',
      ]),
    );
  });

  it('puts every command of package.json’s bin on the PATH, as npm install -g does: steward and kubectl-steward', () => {
    const { bin } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { bin: Record<string, string> };
    const links = [...dockerfile.matchAll(/ln -s (\S+) \/usr\/local\/bin\/(\S+)/g)].map(([, file, command]) => [
      command,
      file,
    ]);
    expect(Object.fromEntries(links)).toEqual(
      Object.fromEntries(Object.entries(bin).map(([command, file]) => [command, `/opt/steward/${file}`])),
    );
    expect(Object.keys(bin)).toEqual(['steward', 'kubectl-steward']);
  });

  it("runs Steward's command under Node with its processes' flags, in the Dockerfile as in the image build.ts packs", () => {
    const entrypoints = [...dockerfile.matchAll(/^ENTRYPOINT\s+(.+)$/gm)].map(
      ([, json]) => JSON.parse(json!) as unknown,
    );
    expect(entrypoints).toEqual([IMAGE_ENTRYPOINT]);
  });

  it("gives Steward's processes their environment, in the Dockerfile as in the image build.ts packs", () => {
    const env = [...dockerfile.matchAll(/^ENV\s+(\w+)=(\S+)$/gm)].map(([, name, value]) => `${name}=${value}`);
    expect(env).toEqual(expect.arrayContaining(Object.entries(PROCESS_ENV).map(([name, value]) => `${name}=${value}`)));
  });

  it.each(productionCommands)(
    'steward %s loads nothing of deploy/local, and only files the image has',
    async (_name, args) => {
      const { code, loaded } = await steward(repoRoot, [...args]);
      expect(code).toBe(0);
      expect(loaded).toContain('cli/main.ts');
      expect(loaded.filter((file) => file.startsWith('deploy/'))).toEqual([]);
      expect(loaded.filter((file) => !files.includes(file))).toEqual([]);
    },
  );

  it('installs exactly the packages its files import: every production dependency is used, none is only a development one', () => {
    const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    // What loads at run time: type-only imports are erased by the compiler.
    const imported = new Set(
      files
        .filter((file) => /\.(ts|cjs)$/.test(file))
        .flatMap((file) => [
          ...readFileSync(join(repoRoot, file), 'utf8')
            .replace(/import\s+type\s[^;]*;/g, '')
            .matchAll(/(?:from\s+|require\(|import\()'([^'.][^']*)'/g),
        ])
        .map(([, specifier]) => specifier!)
        .filter((specifier) => !specifier.startsWith('node:'))
        .map((specifier) => specifier.split('/', specifier.startsWith('@') ? 2 : 1).join('/')),
    );
    // tsx runs a checkout's sources (bin/steward.cjs); the image runs compiled JavaScript and never loads it.
    imported.delete('tsx');
    expect(Object.keys(manifest.dependencies).filter((name) => !imported.has(name))).toEqual([]);
    expect([...imported].filter((name) => !(name in manifest.dependencies)).sort()).toEqual([]);
  });

  describe('assembled from those files alone', () => {
    const root = join(work, 'opt-steward');
    beforeAll(() => {
      for (const file of files) {
        mkdirSync(dirname(join(root, file)), { recursive: true });
        cpSync(join(repoRoot, file), join(root, file));
      }
      symlinkSync(join(repoRoot, 'node_modules'), join(root, 'node_modules'));
      expect(existsSync(join(root, 'deploy'))).toBe(false);
    });

    it.each(productionCommands)('runs steward %s', async (_name, args) => {
      const { code, stdout } = await steward(root, [...args]);
      expect(code).toBe(0);
      expect(stdout).toMatch(/^Usage: steward/);
    });

    it.each([['up'], ['demo']])(
      'refuses steward %s with a sentence that says why, not a stack trace',
      async (command) => {
        const { code, stdout, stderr } = await steward(root, [command]);
        expect(code).toBe(1);
        expect(stdout).toBe('');
        expect(stderr).toBe(
          `error: ${command}: the embedded development stack (deploy/local) is not in this installation (the container image leaves it out): run this command from a checkout of the repository\n`,
        );
      },
    );
  });
});
