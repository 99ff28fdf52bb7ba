import { randomUUID } from 'node:crypto';
import { domainXml } from './domain-xml';
import { createPowerReader, parseDomainTable } from './lookup';
import { type Libvirt, type LibvirtSettings, VirshError } from './virsh';

describe('virsh list --all', () => {
  it("reads each domain's name and state from the table, shut-off ones (no id) included", () => {
    const table = [
      ' Id   Name                     State',
      '-----------------------------------------',
      ' 3    podvm-web-1a2b3c4d       running',
      ' -    podvm-db-5e6f7a8b        shut off',
      ' 12   other                    in shutdown',
      '',
    ].join('\n');
    expect(parseDomainTable(table)).toEqual([
      { name: 'podvm-web-1a2b3c4d', state: 'running' },
      { name: 'podvm-db-5e6f7a8b', state: 'shut off' },
      { name: 'other', state: 'in shutdown' },
    ]);
  });
});

describe("the VMs' power states (one `virsh list --all` a look)", () => {
  const settings: LibvirtSettings = {
    uri: 'test:///default',
    domainType: 'qemu',
    memoryMiB: 64,
    vcpus: 1,
    emulator: '/usr/bin/qemu-system-x86_64',
    pool: 'default',
    imageVolume: 'podvm.qcow2',
    rootDiskGiB: 10,
    network: 'default',
    marker: 'steward-test',
    concurrency: 4,
    timeoutMs: 1_000,
  };
  const vm = (name: string, marker = settings.marker, uuid = randomUUID()) => ({
    name,
    uuid,
    xml: domainXml({ ...settings, marker }, { name, podUid: `uid-${name}`, podNamespace: 'ns', podName: name }, uuid, {
      rootDisk: '/var/lib/libvirt/images/root',
      cloudInitIso: '/var/lib/libvirt/images/iso',
    }),
  });
  /** A libvirt whose domains are `domains`, counting the `dumpxml` calls by name. */
  const fakeLibvirt = (domains: ReturnType<typeof vm>[], read: string[]): Libvirt => ({
    settings,
    failure: (_operation, error) => error,
    virsh: (command, ...args) => {
      if (command === 'list')
        return Promise.resolve(domains.map((d, i) => ` ${i + 1}    ${d.name}    running\n`).join(''));
      const domain = command === 'dumpxml' ? domains.find((d) => d.name === args[0]) : undefined;
      if (!domain) return Promise.reject(new VirshError([command, ...args], 'failed to get domain', '1'));
      read.push(domain.name);
      return Promise.resolve(domain.xml);
    },
  });

  it("reads the metadata of a name not seen before only: VMs being made do not have every other VM's read again", async () => {
    const domains = [vm('a'), vm('b'), vm('foreign', 'someone-else')];
    const read: string[] = [];
    const look = createPowerReader(fakeLibvirt(domains, read));
    expect(await look()).toEqual(
      ['a', 'b'].map((name) => ({
        instanceId: domains.find((d) => d.name === name)!.uuid,
        name,
        podUid: `uid-${name}`,
        podNamespace: 'ns',
        podName: name,
        state: 'running',
      })),
    );
    expect(read.sort()).toEqual(['a', 'b', 'foreign']);
    domains.push(vm('c'));
    read.length = 0;
    expect((await look()).map((v) => v.name)).toEqual(['a', 'b', 'c']);
    expect(read).toEqual(['c']);
    // A name gone from the table is forgotten; made again, it is read again.
    domains.splice(0, 1);
    expect((await look()).map((v) => v.name)).toEqual(['b', 'c']);
    domains.push(vm('a'));
    read.length = 0;
    expect((await look()).find((v) => v.name === 'a')?.instanceId).toBe(domains.at(-1)!.uuid);
    expect(read).toEqual(['a']);
  });
});
