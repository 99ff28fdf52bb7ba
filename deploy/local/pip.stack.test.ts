import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipInstall } from './pip';

// A stack test: the stack's tools (jest/tools.ts) include moto, whose install checks for python3 with pip.
let root: string;
let wheel: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'steward-pip-'));
  wheel = join(root, 'stewardprobe-1.0-py3-none-any.whl');
  // The smallest wheel pip installs, built here so that no test reaches an index.
  execFileSync('python3', [
    '-c',
    `import sys, zipfile
with zipfile.ZipFile(sys.argv[1], 'w') as z:
    z.writestr('stewardprobe/__init__.py', '')
    z.writestr('stewardprobe-1.0.dist-info/METADATA', 'Metadata-Version: 2.1\\nName: stewardprobe\\nVersion: 1.0\\n')
    z.writestr('stewardprobe-1.0.dist-info/WHEEL', 'Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n')
    z.writestr('stewardprobe-1.0.dist-info/RECORD', '')`,
    wheel,
  ]);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const install = (name: string, line: string, requireHashes?: boolean) => {
  const target = join(root, name);
  mkdirSync(target);
  const logFile = join(root, `${name}.log`);
  const done = pipInstall(target, [line], { step: `pip install ${name}`, logFile, requireHashes });
  return {
    done,
    installed: () => existsSync(join(target, 'stewardprobe', '__init__.py')),
    log: () => readFileSync(logFile, 'utf8'),
  };
};
const sha256 = () => createHash('sha256').update(readFileSync(wheel)).digest('hex');

it('refuses a line without its hash when hashes are required, and installs nothing', async () => {
  const pip = install('unhashed', wheel, true);
  await expect(pip.done).rejects.toThrow(/pip install unhashed/);
  expect(pip.log()).toMatch(/--require-hashes/);
  expect(pip.log()).toMatch(/[Hh]ashes are required/);
  expect(pip.installed()).toBe(false);
});

it('installs a line whose hash matches when hashes are required, and refuses one whose hash does not', async () => {
  const good = install('hashed', `${wheel} --hash=sha256:${sha256()}`, true);
  await good.done;
  expect(good.installed()).toBe(true);

  const bad = install('wrong-hash', `${wheel} --hash=sha256:${'0'.repeat(64)}`, true);
  await expect(bad.done).rejects.toThrow(/pip install wrong-hash/);
  expect(bad.log()).toMatch(/DO NOT MATCH THE HASHES/);
  expect(bad.installed()).toBe(false);
});

it("installs a line without a hash when none is required (moto's wheels)", async () => {
  const pip = install('plain', wheel);
  await pip.done;
  expect(pip.installed()).toBe(true);
});
