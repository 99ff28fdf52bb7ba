// The published midonet-kubernetes test vectors (ref/midonet-api.md §2.3, TranslationVersion 4, tenant
// `midonetkube`), and the MK unit-test values for MACs, interface names and Translation names.
import {
  endpointIds,
  globalIds,
  macForKey,
  makeDNS,
  nodeAddressRouteId,
  nodeIds,
  podInterfaceName,
  podPortId,
  servicePortChainId,
  servicePortJumpRuleId,
  tenantSpace,
  translationName,
  MAX_TRANSLATION_NAME,
} from './ids';
import { parseMAC, parsePodCIDR, parseUUID } from './net';

const tenant = 'midonetkube';
const globals = globalIds(tenant);
const node1 = nodeIds(tenant, 'node1');
const endpoint = endpointIds(tenant, 'web/http/10.96.0.20/10.1.1.5/8080/TCP');

describe('ID test vectors', () => {
  test.each([
    [
      'the tenant namespace is uuidv5(3978567E-…, "4/midonetkube")',
      tenantSpace(tenant),
      'b6b0f75c-b219-5240-baf8-77c92a28663e',
    ],
    ['KUBE-MAIN is IDForKey("midonet-global","chain")', globals.mainChain, '23b6f94b-2fb5-55b0-9614-3cbb6d6dc17f'],
    ['KUBE-SERVICES is SubID(main,"Services Chain")', globals.servicesChain, '8ba7d5a7-f323-53d4-8522-ddb2c7158ef0'],
    [
      'the cluster router is SubID(main,"Cluster Router")',
      globals.clusterRouter,
      '21607839-c6b4-5b98-8aa1-89a1aab61bca',
    ],
    [
      'the default tunnel zone is SubID(main,"Default Tunnel Zone")',
      globals.defaultTunnelZone,
      '51329ede-9b0f-5923-98ee-bf4ef08af54f',
    ],
    ['KUBE-PRE is SubID(main,"Pre Chain")', globals.preChain, '901ce55e-dc0c-5ad7-991e-1e28f72223e9'],
    ['the jump to PRE is SubID(main,"Jump To Pre")', globals.jumpToPre, 'cb870299-065d-5c6f-9c84-d461359e315e'],
    [
      'the jump to SERVICES is SubID(main,"Jump To Services")',
      globals.jumpToServices,
      '95992d5c-f2b0-54e9-a6e0-39ca6ba2e5b8',
    ],
    ['the rev_snat rule is SubID(main,"Reverse SNAT")', globals.reverseSNAT, 'c3a8cb26-64fc-572c-9e00-601cb8d6cb0a'],
    ['the rev_dnat rule is SubID(main,"Reverse DNAT")', globals.reverseDNAT, '380d537f-c062-569a-9eeb-3d2cab8efe0f'],
    ['a Node bridge is IDForKey("Node", name)', node1.bridge, 'd1c5f0f1-d501-5330-b521-b2daaf3d238b'],
    ['the bridge port is SubID(bridge,"Bridge Port")', node1.bridgePort, '3f0a6a70-d576-5f19-afe8-716588fbf223'],
    ['the node port is SubID(bridge,"Node Port")', node1.nodePort, '3779194d-91e0-51d0-98e0-9adc61e6ffc0'],
    [
      'the node port chain is SubID(bridge,"Node Port Chain")',
      node1.nodePortChain,
      '401490dd-09be-5a37-ad59-a80ba47fb01c',
    ],
    [
      'the node SNAT rule is SubID(bridge,"Node Port SNAT Rule")',
      node1.nodePortSNATRule,
      'a4660753-2d67-582b-b3ef-71c514602152',
    ],
    ['the router port is SubID(bridge,"Router Port")', node1.routerPort, '78181522-c44d-52e7-96c9-801b2f7d5f66'],
    ['the PodCIDR route is SubID(bridge,"Route")', node1.subnetRoute, 'bedd7567-3ecc-5bd8-90a3-611c9f758d40'],
    [
      'a node address route uses the kind "Node Address", with a space',
      nodeAddressRouteId(tenant, 'node1/InternalIP/192.0.2.10'),
      '7823e060-8ada-57ea-a789-a462c41660bc',
    ],
    [
      'a Pod port is IDForKey("Pod", "namespace/name")',
      podPortId(tenant, 'default', 'nginx'),
      '2116e331-6186-5900-b627-392aab45b2ec',
    ],
    [
      'a service port chain is IDForKey("ServicePort", portKey)',
      servicePortChainId(tenant, 'default/web/http'),
      '98e99174-edfa-542e-88e6-3ca9a6215ea8',
    ],
    [
      'its jump rule is IDForKey("ServicePortSub", sub name)',
      servicePortJumpRuleId(tenant, 'default/web/http/10.96.0.20/6/80'),
      'dc223993-16ba-56be-8cb7-50cbd4083aaf',
    ],
    [
      'an endpoint chain is IDForKey("Endpoint", sub name without namespace)',
      endpoint.chain,
      '04cfd038-64d7-518a-ae51-8685c40be5e0',
    ],
    ['the endpoint jump is SubID(ep,"Jump to Endpoint")', endpoint.jumpRule, '631d186f-9d53-5606-bcfc-3d9756fd9326'],
    ['the endpoint DNAT is SubID(ep,"DNAT")', endpoint.dnatRule, '5897ca30-1d59-5f0e-87af-2bddac0554bf'],
    ['the endpoint SNAT is SubID(ep,"SNAT")', endpoint.snatRule, 'd70f4e8e-0202-5159-8d54-8937d7d06e2b'],
  ])('%s', (_what, actual, want) => {
    expect(actual).toBe(want);
  });
});

describe('MACs, interface names and Translation names', () => {
  test.each([
    ['MACForKey("hey") is the MK unit-test value', macForKey('hey'), 'ac:ca:ba:fa:69:0b'],
    ['MACForKey("node1") is the router port MAC of node1', macForKey('node1'), 'ac:ca:ba:ca:12:f3'],
    ['IFNameForKey("foo/bar") is the MK unit-test value', podInterfaceName('foo', 'bar'), 'mido17cdeaefa5c'],
    [
      'default/nginx gets the 15-character name the CNI plugin computes',
      podInterfaceName('default', 'nginx'),
      'mido1960ee39339',
    ],
    ['a name that is already DNS-safe is kept as is', translationName('Node', 'node1'), 'node.4.node1'],
    ['a Pod Translation uses the pod name only', translationName('Pod', 'nginx'), 'pod.4.nginx'],
    ['the global chain Translation', translationName('midonet-global', 'chain'), 'midonet-global.4.chain'],
    [
      'slashes and capitals are replaced and the SHA-1 of the original appended (the ref example)',
      translationName('Service-Port', 'default/web/http/10.96.0.20/6/80'),
      'service-port.4.default-web-http-10.96.0.20-6-80-a0afcec8cf63bca4237f7042adb79c75f14e4c32',
    ],
    [
      'makeDNS lower-cases and hashes even without slashes',
      makeDNS('Foo'),
      'foo-201a6b3053cc1422d2c3670b62616221d2290929',
    ],
    [
      'a name of exactly 253 characters is kept as MK writes it',
      translationName('Pod', 'p'.repeat(247)),
      `pod.4.${'p'.repeat(247)}`,
    ],
  ])('%s', (_what, actual, want) => {
    expect(actual).toBe(want);
  });

  const dnsSubdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
  test.each([
    ['a 253-character Pod name', 'Pod', 'p'.repeat(253)],
    ['a 200-character Node name', 'Node', 'n'.repeat(200) + '.'.padEnd(53, 'x')],
    ['a cut that would end in a dot', 'Pod', `${'a'.repeat(205)}.${'b'.repeat(60)}`],
    ['a long sub key with slashes', 'Service-Port', `default/${'s'.repeat(250)}/http/10.96.0.20/6/80`],
  ])(
    'an overlong name (%s) is cut to 253 characters, stays a valid and unique name, and ends in the SHA-1 of the whole',
    (_what, kind, name) => {
      const cut = translationName(kind, name);
      expect(cut.length).toBeLessThanOrEqual(MAX_TRANSLATION_NAME);
      expect(cut).toMatch(dnsSubdomain);
      expect(cut).toMatch(/-[0-9a-f]{40}$/);
      expect(translationName(kind, `${name}x`)).not.toBe(cut);
    },
  );
});

describe('parsers', () => {
  test.each([
    [
      'Go uuid.Parse accepts upper case and prints lower case',
      '44FB4381-C99D-4389-86C3-FDCA765BCBDE',
      '44fb4381-c99d-4389-86c3-fdca765bcbde',
    ],
    ['it accepts braces', '{44fb4381-c99d-4389-86c3-fdca765bcbde}', '44fb4381-c99d-4389-86c3-fdca765bcbde'],
    [
      'it accepts the urn:uuid: prefix',
      'urn:uuid:44fb4381-c99d-4389-86c3-fdca765bcbde',
      '44fb4381-c99d-4389-86c3-fdca765bcbde',
    ],
    ['it accepts 32 bare hex digits', '44fb4381c99d438986c3fdca765bcbde', '44fb4381-c99d-4389-86c3-fdca765bcbde'],
    ['it rejects anything else', 'node1', undefined],
  ])('UUID: %s', (_what, input, want) => {
    expect(parseUUID(input)).toBe(want);
  });

  test.each([
    ['colons, any case', '99:88:77:66:55:4A', '99:88:77:66:55:4a'],
    ['dashes', '99-88-77-66-55-44', '99:88:77:66:55:44'],
    ['dotted groups of four', '9988.7766.5544', '99:88:77:66:55:44'],
    ['mixed separators are rejected', '99:88-77:66:55:44', undefined],
    ['EUI-64 is rejected (a bridge MAC table holds 48-bit MACs)', '99:88:77:66:55:44:33:22', undefined],
  ])('MAC: %s', (_what, input, want) => {
    expect(parseMAC(input)).toBe(want);
  });

  test.each([
    [
      'gateway and node IP are the first two addresses after the network',
      '10.1.2.0/24',
      { network: '10.1.2.0', prefixLength: 24, gatewayIP: '10.1.2.1', nodeIP: '10.1.2.2' },
    ],
    [
      'host bits are masked off first, as net.ParseCIDR does',
      '10.1.2.77/24',
      { network: '10.1.2.0', prefixLength: 24, gatewayIP: '10.1.2.1', nodeIP: '10.1.2.2' },
    ],
    [
      'a /30 still has room for both',
      '10.0.0.4/30',
      { network: '10.0.0.4', prefixLength: 30, gatewayIP: '10.0.0.5', nodeIP: '10.0.0.6' },
    ],
    ['a /31 has no room for a node address', '10.0.0.4/31', undefined],
    ['IPv6 is not supported', 'fd00::/64', undefined],
    ['leading zeros are rejected', '10.01.2.0/24', undefined],
  ])('PodCIDR: %s', (_what, input, want) => {
    expect(parsePodCIDR(input)).toEqual(want);
  });
});
