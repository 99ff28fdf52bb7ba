import { podVmMetaData, podVmUserData } from '../cloud-init';
import { domainXml, parseMetadata } from './domain-xml';
import { parseVolume, podVmVolumes, rootCapacityBytes, rootVolumeXml, volumeNames } from './volume-xml';
import type { LibvirtSettings } from './virsh';
import { attribute, child, children, parseXml, text } from './xml';

const settings: LibvirtSettings = {
  uri: 'qemu:///system',
  domainType: 'qemu',
  memoryMiB: 64,
  vcpus: 1,
  emulator: '/usr/bin/qemu-system-x86_64',
  pool: 'default',
  imageVolume: 'podvm-base.qcow2',
  rootDiskGiB: 10,
  network: 'default',
  marker: 'steward',
  concurrency: 4,
  timeoutMs: 1000,
};
const input = { name: 'podvm-web-0a1b2c3d', podUid: '0a1b2c3d-0000', podNamespace: 'ns', podName: 'web"<x>' };
const GIB = 1024 ** 3;
const image = { path: '/var/lib/libvirt/images/podvm-base.qcow2', format: 'qcow2', capacityBytes: 3 * GIB };

describe('a pod VM as cloud-api-adaptor makes it, planned', () => {
  it("names its volumes after the VM, as cloud-api-adaptor's CreateDomain does", () => {
    expect(volumeNames(input.name)).toEqual({
      root: 'podvm-web-0a1b2c3d-root.qcow2',
      cloudInit: 'podvm-web-0a1b2c3d-cloudinit.iso',
    });
  });

  it('sizes the root disk in GiB, never below the image (a qcow2 overlay cannot shrink its backing file)', () => {
    expect(rootCapacityBytes(10, 3 * GIB)).toBe(10 * GIB);
    expect(rootCapacityBytes(1, 3 * GIB)).toBe(3 * GIB);
  });

  it('reads path, format and capacity from virsh vol-dumpxml, in any unit, and nothing from a partial XML', () => {
    const xml = `<volume type='file'><name>b</name><capacity unit='bytes'>67108864</capacity>
      <target><path>/p/b.qcow2</path><format type='qcow2'/></target></volume>`;
    expect(parseVolume(xml)).toEqual({ path: '/p/b.qcow2', format: 'qcow2', capacityBytes: 64 * 1024 ** 2 });
    expect(parseVolume(xml.replace("unit='bytes'>67108864", "unit='GiB'>2"))?.capacityBytes).toBe(2 * GIB);
    expect(parseVolume('<volume><capacity>1</capacity><target></target></volume>')).toBeUndefined();
  });

  it('writes the root volume as qcow2 backed by the image, with its path and format', () => {
    const { root } = podVmVolumes(settings, input, image);
    expect(root.name).toBe('podvm-web-0a1b2c3d-root.qcow2');
    expect(root.xml).toBe(rootVolumeXml(root.name, 10 * GIB, image));
    const volume = child(parseXml(root.xml), 'volume');
    expect(text(child(volume, 'name'))).toBe(root.name);
    expect([attribute(child(volume, 'capacity'), 'unit'), text(child(volume, 'capacity'))]).toEqual([
      'bytes',
      String(10 * GIB),
    ]);
    expect(attribute(child(volume, 'target', 'format'), 'type')).toBe('qcow2');
    expect(text(child(volume, 'backingStore', 'path'))).toBe(image.path);
    expect(attribute(child(volume, 'backingStore', 'format'), 'type')).toBe('qcow2');
  });

  it('escapes what it writes: names, paths and values with & < > " \' read back as given', () => {
    const odd = `a&b<c>"d"'e'`;
    const rootXml = rootVolumeXml(odd, GIB, { ...image, path: `/p/${odd}` });
    expect(rootXml).not.toContain(odd);
    const dumped = `<volume><capacity unit='bytes'>1</capacity><target><path>/p/a&amp;b&lt;c&gt;&quot;d&quot;&apos;e&#39;</path><format type='raw'/></target></volume>`;
    expect(parseVolume(dumped)?.path).toBe(`/p/${odd}`);
    expect(text(child(parseXml(rootXml), 'volume', 'backingStore', 'path'))).toBe(`/p/${odd}`);
    const xml = domainXml(
      { ...settings, emulator: `/usr/bin/${odd}`, marker: odd },
      { ...input, name: odd, podNamespace: odd, tags: { [odd]: odd } },
      '6f1c2d3e-0000-4000-8000-000000000001',
      { rootDisk: `/p/${odd}.qcow2`, cloudInitIso: `/p/${odd}.iso`, network: odd },
    );
    expect(xml).not.toContain(odd);
    const domain = child(parseXml(xml), 'domain');
    expect(text(child(domain, 'name'))).toBe(odd);
    expect(text(child(domain, 'devices', 'emulator'))).toBe(`/usr/bin/${odd}`);
    expect(children(child(domain, 'devices'), 'disk').map((d) => attribute(child(d, 'source'), 'file'))).toEqual([
      `/p/${odd}.qcow2`,
      `/p/${odd}.iso`,
    ]);
    expect(attribute(child(domain, 'devices', 'interface', 'source'), 'network')).toBe(odd);
    const tag = child(domain, 'metadata', 'steward:vm', 'steward:tag');
    expect([attribute(tag, 'key'), attribute(tag, 'value')]).toEqual([odd, odd]);
    expect(parseMetadata(xml)).toEqual({
      marker: odd,
      podUid: input.podUid,
      podNamespace: odd,
      podName: input.podName,
    });
  });

  it("puts the pod's identity in the user data and the VM's name in the meta-data, as documents cloud-init reads", () => {
    const userData = podVmUserData(input);
    expect(userData.startsWith('#cloud-config\n')).toBe(true);
    const { write_files } = JSON.parse(userData.slice('#cloud-config\n'.length)) as {
      write_files: { path: string; content: string }[];
    };
    expect(write_files.map((f) => f.path)).toEqual(['/run/peerpod/steward-pod.json']);
    expect(JSON.parse(write_files[0]!.content)).toEqual({
      'pod-namespace': 'ns',
      'pod-name': 'web"<x>',
      'pod-uid': '0a1b2c3d-0000',
    });
    expect(JSON.parse(podVmMetaData(input.name))).toEqual({ 'instance-id': input.name, 'local-hostname': input.name });
    expect(Object.keys(podVmVolumes(settings, input, image).cloudInit.files)).toEqual([
      'user-data',
      'meta-data',
      'vendor-data',
    ]);
  });

  it('gives the domain its root disk to boot from, the ISO as a read-only CD-ROM, and a NIC only on a network', () => {
    const devices = { rootDisk: '/p/r.qcow2', cloudInitIso: '/p/c.iso' };
    const uuid = '6f1c2d3e-0000-4000-8000-000000000001';
    const xml = domainXml(settings, input, uuid, { ...devices, network: 'default' });
    const deviceTree = child(parseXml(xml), 'domain', 'devices');
    const [disk, cdrom] = children(deviceTree, 'disk');
    expect([attribute(disk, 'device'), attribute(child(disk, 'driver'), 'type')]).toEqual(['disk', 'qcow2']);
    expect(attribute(child(disk, 'source'), 'file')).toBe('/p/r.qcow2');
    expect(attribute(child(disk, 'boot'), 'order')).toBe('1');
    expect([attribute(cdrom, 'device'), attribute(child(cdrom, 'driver'), 'type')]).toEqual(['cdrom', 'raw']);
    expect(attribute(child(cdrom, 'source'), 'file')).toBe('/p/c.iso');
    expect(child(cdrom, 'readonly')).toBeDefined();
    const nic = child(deviceTree, 'interface');
    expect([attribute(nic, 'type'), attribute(child(nic, 'source'), 'network')]).toEqual(['network', 'default']);
    expect(attribute(child(nic, 'model'), 'type')).toBe('virtio');
    expect(domainXml(settings, input, uuid, devices)).not.toContain('<interface');
    expect(parseMetadata(xml)).toEqual({
      marker: 'steward',
      podUid: input.podUid,
      podNamespace: 'ns',
      podName: input.podName,
    });
  });
});
