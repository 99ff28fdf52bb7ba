import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stackInfo } from './jest/stack-info';
import { virsh } from './libvirt';

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
