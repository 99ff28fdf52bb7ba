import { planDeletion } from './deletion-plan';

/** A running cloud-api-adaptor pod VM as `virsh dumpxml` shows it (libvirt.go createDomainXMLx86_64, with firmware). */
const caaLive = `<domain type='kvm' id='3'>
  <name>podvm-web-1-0a1b2c3d</name>
  <uuid>8e4f6a1e-2b7c-4d1e-9f00-3c2a1b0d9e8f</uuid>
  <os firmware='efi'>
    <type arch='x86_64' machine='pc-q35-7.2'>hvm</type>
    <loader readonly='yes' type='pflash'>/usr/share/OVMF/OVMF_CODE_4M.fd</loader>
    <nvram template='/usr/share/OVMF/OVMF_VARS_4M.fd'>/var/lib/libvirt/qemu/nvram/podvm-web-1-0a1b2c3d_VARS.fd</nvram>
  </os>
  <devices>
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
    <disk type='file' device='disk'>
      <driver name='qemu' type='qcow2'/>
      <source file='/var/lib/libvirt/images/podvm-web-1-0a1b2c3d-root.qcow2' index='2'/>
      <backingStore type='file' index='3'>
        <format type='qcow2'/>
        <source file='/var/lib/libvirt/images/podvm-base.qcow2'/>
        <backingStore/>
      </backingStore>
      <target dev='sda' bus='sata'/>
    </disk>
    <disk type='file' device='cdrom'>
      <driver name='qemu' type='raw'/>
      <source file='/var/lib/libvirt/images/podvm-web-1-0a1b2c3d-cloudinit.iso' index='1'/>
      <backingStore/>
      <target dev='sdb' bus='sata'/>
      <readonly/>
    </disk>
    <interface type='network'><source network='default'/></interface>
  </devices>
</domain>`;

describe('planDeletion: what deleting a domain removes', () => {
  it('a cloud-api-adaptor pod VM: its root volume and cloud-init ISO by path, and its NVRAM; never the base image its root is backed by', () => {
    expect(planDeletion([caaLive])).toEqual({
      volumes: [
        { path: '/var/lib/libvirt/images/podvm-web-1-0a1b2c3d-root.qcow2' },
        { path: '/var/lib/libvirt/images/podvm-web-1-0a1b2c3d-cloudinit.iso' },
      ],
      kept: [],
      nvram: true,
    });
  });

  it('pool volumes by pool and name; a volume in both the live and the persistent XML is deleted once', () => {
    const xml = (extra: string) => `<domain type='qemu'><name>vm</name><os><type>hvm</type></os><devices>
      <disk type='volume' device='disk'><source pool='pods' volume='vm-root.qcow2'/><target dev='vda'/></disk>${extra}
    </devices></domain>`;
    const hotplugged = `<disk type='volume' device='disk'><source pool='pods' volume='vm-data'/><target dev='vdb'/></disk>`;
    expect(planDeletion([xml(hotplugged), xml('')])).toEqual({
      volumes: [
        { pool: 'pods', volume: 'vm-root.qcow2' },
        { pool: 'pods', volume: 'vm-data' },
      ],
      kept: [],
      nvram: false,
    });
  });

  it('keeps what is not this domain own storage: a shareable disk, a network disk, an empty drive; a block device is a volume', () => {
    const xml = `<domain><os><type>hvm</type><nvram/></os><devices>
      <disk type='file' device='disk'><source file='/srv/shared.img'/><target dev='vda'/><shareable/></disk>
      <disk type='network' device='disk'><source protocol='rbd' name='pool/image'><host name='mon'/></source><target dev='vdb'/></disk>
      <disk type='file' device='cdrom'><target dev='hdc'/><readonly/></disk>
      <disk type='block' device='disk'><source dev='/dev/vg/vm-root'/><target dev='vdc'/></disk>
    </devices></domain>`;
    expect(planDeletion([xml])).toEqual({
      volumes: [{ path: '/dev/vg/vm-root' }],
      kept: ['vda: shareable (other domains use it)', 'vdb: network disk, not a storage volume', 'hdc: no medium'],
      nvram: true,
    });
  });

  it("a disk being copied (blockcopy's <mirror>) deletes its own source, not the mirror's destination", () => {
    const xml = `<domain><devices><disk type='file' device='disk'>
      <source file='/pool/vm-root.qcow2'/>
      <mirror type='file' job='copy'><source file='/elsewhere/copy.qcow2'/></mirror>
      <target dev='vda'/></disk></devices></domain>`;
    expect(planDeletion([xml]).volumes).toEqual([{ path: '/pool/vm-root.qcow2' }]);
  });

  it("Steward's diskless domain: nothing but the domain", () => {
    const xml = `<domain type='qemu'><name>vm</name><os><type arch='x86_64' machine='pc'>hvm</type></os>
      <devices><emulator>/usr/bin/qemu-system-x86_64</emulator><memballoon model='none'/></devices></domain>`;
    expect(planDeletion([xml])).toEqual({ volumes: [], kept: [], nvram: false });
  });

  it('reads escaped paths back as written', () => {
    const xml = `<domain><devices><disk type='file' device='disk'><source file='/pool/a&amp;b &apos;x&apos;.qcow2'/></disk></devices></domain>`;
    expect(planDeletion([xml]).volumes).toEqual([{ path: "/pool/a&b 'x'.qcow2" }]);
  });
});
