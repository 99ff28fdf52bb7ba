import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { stackInfo } from './jest/stack-info';
import { libvirtSocket, startLibvirt, stackLibvirt, virsh, type Libvirt } from './libvirt';
import { waitUntil } from './process';

/** The smallest domain that runs: software emulation, no disk (the guest idles in the BIOS). */
const domainXml = (name: string) => `
<domain type='qemu'>
  <name>${name}</name>
  <memory unit='MiB'>64</memory>
  <vcpu>1</vcpu>
  <os><type arch='x86_64' machine='pc'>hvm</type></os>
  <metadata><steward:vm xmlns:steward="https://steward.dev/xmlns/vm/1"><steward:test>stack</steward:test></steward:vm></metadata>
  <devices><emulator>/usr/bin/qemu-system-x86_64</emulator><memballoon model='none'/></devices>
</domain>`;

describe('libvirt of the embedded stack', () => {
  it('defines, starts, inspects and destroys a tiny qemu domain through virsh', async () => {
    const { uri } = stackInfo().libvirt;
    const name = `steward-stack-test-${Date.now().toString(36)}`;
    const file = join(mkdtempSync(join(tmpdir(), 'steward-vm-')), 'domain.xml');
    writeFileSync(file, domainXml(name));

    await virsh(uri, 'define', file);
    try {
      const uuid = (await virsh(uri, 'domuuid', name)).trim();
      expect(uuid).toMatch(/^[0-9a-f-]{36}$/);
      await virsh(uri, 'start', name);
      expect((await virsh(uri, 'domstate', uuid)).trim()).toBe('running');
      expect(await virsh(uri, 'dominfo', uuid)).toMatch(/OS Type:\s+hvm/);
      expect(await virsh(uri, 'metadata', uuid, 'https://steward.dev/xmlns/vm/1')).toMatch(
        /<(\w+:)?test>stack<\/(\w+:)?test>/,
      );
      await virsh(uri, 'destroy', uuid);
      expect((await virsh(uri, 'domstate', uuid)).trim()).toBe('shut off');
    } finally {
      await virsh(uri, 'undefine', name).catch(() => undefined);
    }
    await expect(virsh(uri, 'domstate', name)).rejects.toThrow(/failed to get domain/);
  });
});

/** A stack's state directory, as a stack would have it. */
const stateDir = () => mkdtempSync(join(tmpdir(), 'steward-libvirt-'));
const report = () => {};

/** Defines and starts the tiny domain `name` on `uri`; its UUID. */
async function runDomain(uri: string, name: string): Promise<string> {
  const file = join(mkdtempSync(join(tmpdir(), 'steward-vm-')), 'domain.xml');
  writeFileSync(file, domainXml(name));
  await virsh(uri, 'define', file);
  await virsh(uri, 'start', name);
  return (await virsh(uri, 'domuuid', name)).trim();
}

/** The QEMU processes of domain `name`, whoever started them. */
const qemuPids = (name: string) =>
  readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(`guest=${name},`);
      } catch {
        return false; // gone meanwhile
      }
    });

const state = async (uri: string, domain: string) => (await virsh(uri, 'domstate', domain)).trim();
const hostUuid = async (uri: string) => /<host>\s*<uuid>([^<]+)<\/uuid>/.exec(await virsh(uri, 'capabilities'))?.[1];

describe("a libvirtd of each stack's own", () => {
  it("runs the shared stack's daemon on sockets under its state directory, not the machine's", () => {
    const { libvirt, stateDir: dir } = stackInfo();
    expect(libvirt.external).toBe(false);
    expect(libvirtSocket(libvirt.uri).startsWith(resolve(dir) + '/')).toBe(true);
  });

  it("keeps one stack's VM running and its libvirt answering when another stack stops", async () => {
    const [first, second] = await Promise.all([
      startLibvirt({ stateDir: stateDir(), report }),
      startLibvirt({ stateDir: stateDir(), report }),
    ]);
    try {
      expect(first.uri).not.toBe(second.uri);
      // One name on both: each daemon keeps its own domain definitions and QEMU driver state.
      const name = `steward-two-stacks-${Date.now().toString(36)}`;
      const [firstVm] = await Promise.all([runDomain(first.uri, name), runDomain(second.uri, name)]);
      expect(await virsh(first.uri, 'list', '--all', '--name')).toBe(`${name}\n\n`);

      await second.stop();
      await expect(virsh(second.uri, 'uri')).rejects.toThrow();
      expect(await state(first.uri, firstVm)).toBe('running');
      expect(first.process?.running).toBe(true);
    } finally {
      await Promise.all([first.stop(), second.stop()]);
    }
  });

  it("keeps a stack's host UUID (the cloud identity of its VMs) across its restarts, and no two stacks share one", async () => {
    const dir = stateDir();
    const uuidOfRun = async () => {
      const libvirt = await startLibvirt({ stateDir: dir, report });
      try {
        return await hostUuid(libvirt.uri);
      } finally {
        await libvirt.stop();
      }
    };
    const first = await uuidOfRun();
    expect(first).toMatch(/^[0-9a-f-]{36}$/);
    expect(await uuidOfRun()).toBe(first);
    expect(await hostUuid(stackInfo().libvirt.uri)).not.toBe(first);
  });

  it('leaves no VM running when the stack is killed outright: its daemon and every QEMU it started die with it', async () => {
    const libvirt = await startLibvirt({ stateDir: stateDir(), report });
    try {
      const name = `steward-killed-stack-${Date.now().toString(36)}`;
      await runDomain(libvirt.uri, name);
      expect(qemuPids(name)).toHaveLength(1);
      // What the kernel does to the stack's children when the stack's process dies (setpriv --pdeathsig).
      process.kill(libvirt.process!.pid, 'SIGKILL');
      await waitUntil('its QEMU gone', () => Promise.resolve(qemuPids(name).length === 0), { timeoutMs: 10_000 });
    } finally {
      await libvirt.stop();
    }
  });

  it('never stops a daemon it did not start: one given by URI stays up, with its VM, after the stack stops', async () => {
    const theirs: Libvirt = await startLibvirt({ stateDir: stateDir(), report });
    try {
      const vm = await runDomain(theirs.uri, `steward-external-${Date.now().toString(36)}`);
      const ours = await stackLibvirt({ uri: theirs.uri, stateDir: stateDir(), report });
      expect(ours.process).toBeUndefined();
      await ours.stop();
      expect(await state(theirs.uri, vm)).toBe('running');
    } finally {
      await theirs.stop();
    }
  });
});
