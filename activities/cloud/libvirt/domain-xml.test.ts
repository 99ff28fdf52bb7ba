import { domainIdentity, parseHostUuid, parseMetadata } from './domain-xml';

const uuid = '4C4C4544-0042-3510-8052-B4C04F4A4D32';

describe("reading libvirt's XML", () => {
  it('the host UUID from capabilities, else from sysinfo; never a non-UUID or one outside <host>', () => {
    const caps = (host: string) =>
      `<capabilities><host><uuid>${host}</uuid><cpu><arch>x86_64</arch></cpu></host><guest><uuid>x</uuid></guest></capabilities>`;
    expect(parseHostUuid(caps(uuid))).toBe(uuid.toLowerCase());
    const sysinfo = `<sysinfo type='smbios'><bios><entry name='vendor'>SeaBIOS</entry></bios>
      <system><entry name='manufacturer'>QEMU</entry><entry name='uuid'>${uuid}</entry></system></sysinfo>`;
    expect(parseHostUuid(caps('not-a-uuid'), sysinfo)).toBe(uuid.toLowerCase());
    expect(parseHostUuid('<capabilities><guest><uuid>' + uuid + '</uuid></guest></capabilities>')).toBeUndefined();
    expect(parseHostUuid('', '')).toBeUndefined();
  });

  it('the domain name, unescaped, its UUID, and Steward metadata under whatever prefix, only in its namespace', () => {
    const xml = `<domain type='qemu' id='7'><name>a&amp;b&lt;c&gt;&#39;d&#x27;</name><uuid>${uuid}</uuid><metadata>
      <s:vm xmlns:s="https://steward.dev/xmlns/vm/1"><s:managedBy>m</s:managedBy><s:podName>p&quot;</s:podName></s:vm>
      <other:vm xmlns:other="urn:x"><other:podUid>no</other:podUid></other:vm></metadata></domain>`;
    const meta = { marker: 'm', podUid: undefined, podNamespace: undefined, podName: 'p"' };
    expect(domainIdentity(xml)).toEqual({ name: "a&b<c>'d'", uuid, meta });
    expect(parseMetadata(xml)).toEqual(meta);
    expect(domainIdentity('<domain><metadata/></domain>')).toEqual({
      name: undefined,
      uuid: undefined,
      meta: undefined,
    });
    expect(parseMetadata('<domain><metadata/></domain>')).toBeUndefined();
  });
});
