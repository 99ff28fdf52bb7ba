// What midonet-kubernetes wrote, byte for byte: the Translations (names, namespaces, owners, each resource's kind,
// parent and body in Go's field order) its controllers create for a cluster. IDs marked in ids.test.ts are the
// published test vectors; the rest were computed from MK's Go code (pkg/converter) with Python's uuid.uuid5 and
// hashlib, independently of Steward's translation, which the golden test checks against the first list and the
// migration test takes over from the second.
import type * as k8s from '@kubernetes/client-node';
import { TRANSLATION_API } from '../../model/naming';
import { GLOBAL_LABEL, OWNER_UID_LABEL, type BackendKind, type BackendResource } from '../../model/translation/types';
import { TRANSLATION_FINALIZER } from '../../model/vocabulary';

export interface WrittenTranslation {
  name: string;
  namespace: string;
  /** `<Kind>/<name>` of the owner, null for the global Translations. */
  owner: string | null;
  resources: [BackendKind, string, object][];
}

/** The sample cluster (model/translation/sample-cluster.ts), in push order. */
export const sampleClusterAsWritten: WrittenTranslation[] = [
  {
    name: 'midonet-global.4.tunnel-zone',
    namespace: 'kube-system',
    owner: null,
    resources: [
      ['TunnelZone', '', { id: '51329ede-9b0f-5923-98ee-bf4ef08af54f', name: 'DefaultTunnelZone', type: 'vxlan' }],
    ],
  },
  {
    name: 'midonet-global.4.cluster-router',
    namespace: 'kube-system',
    owner: null,
    resources: [
      ['Router', '', { id: '21607839-c6b4-5b98-8aa1-89a1aab61bca', tenantId: 'midonetkube', name: 'ClusterRouter' }],
    ],
  },
  {
    name: 'midonet-global.4.chain',
    namespace: 'kube-system',
    owner: null,
    resources: [
      ['Chain', '', { id: '23b6f94b-2fb5-55b0-9614-3cbb6d6dc17f', tenantId: 'midonetkube', name: 'KUBE-MAIN' }],
      ['Chain', '', { id: '901ce55e-dc0c-5ad7-991e-1e28f72223e9', tenantId: 'midonetkube', name: 'KUBE-PRE' }],
      ['Chain', '', { id: '8ba7d5a7-f323-53d4-8522-ddb2c7158ef0', tenantId: 'midonetkube', name: 'KUBE-SERVICES' }],
      [
        'Rule',
        '23b6f94b-2fb5-55b0-9614-3cbb6d6dc17f',
        {
          id: '95992d5c-f2b0-54e9-a6e0-39ca6ba2e5b8',
          type: 'jump',
          jumpChainId: '8ba7d5a7-f323-53d4-8522-ddb2c7158ef0',
        },
      ],
      [
        'Rule',
        '23b6f94b-2fb5-55b0-9614-3cbb6d6dc17f',
        {
          id: 'cb870299-065d-5c6f-9c84-d461359e315e',
          type: 'jump',
          jumpChainId: '901ce55e-dc0c-5ad7-991e-1e28f72223e9',
        },
      ],
      [
        'Rule',
        '901ce55e-dc0c-5ad7-991e-1e28f72223e9',
        { id: '380d537f-c062-569a-9eeb-3d2cab8efe0f', type: 'rev_dnat', flowAction: 'accept' },
      ],
      [
        'Rule',
        '901ce55e-dc0c-5ad7-991e-1e28f72223e9',
        { id: 'c3a8cb26-64fc-572c-9e00-601cb8d6cb0a', type: 'rev_snat', flowAction: 'continue' },
      ],
    ],
  },
  {
    name: 'node-tunnel-endpoint.4.node1-192.0.2.10-51329ede-9b0f-5923-98ee-bf4ef08af54f-8d1c9a52-3f0e-4b7a-9c1d-5e2f6a7b8c90-64115e3e5a5e15f6c7465295d1b9d8096843a102',
    namespace: 'default',
    owner: 'Node/node1',
    resources: [
      [
        'TunnelZoneHost',
        '51329ede-9b0f-5923-98ee-bf4ef08af54f',
        { hostId: '8d1c9a52-3f0e-4b7a-9c1d-5e2f6a7b8c90', ipAddress: '192.0.2.10' },
      ],
    ],
  },
  {
    name: 'node.4.node1',
    namespace: 'default',
    owner: 'Node/node1',
    resources: [
      [
        'Bridge',
        '',
        {
          id: 'd1c5f0f1-d501-5330-b521-b2daaf3d238b',
          tenantId: 'midonetkube',
          name: 'node1',
          inboundFilterId: '23b6f94b-2fb5-55b0-9614-3cbb6d6dc17f',
        },
      ],
      ['Port', 'd1c5f0f1-d501-5330-b521-b2daaf3d238b', { id: '3f0a6a70-d576-5f19-afe8-716588fbf223', type: 'Bridge' }],
      [
        'Port',
        '21607839-c6b4-5b98-8aa1-89a1aab61bca',
        {
          id: '78181522-c44d-52e7-96c9-801b2f7d5f66',
          type: 'Router',
          portSubnet: ['10.1.1.1/24'],
          portMac: 'ac:ca:ba:ca:12:f3',
        },
      ],
      [
        'Route',
        '21607839-c6b4-5b98-8aa1-89a1aab61bca',
        {
          id: 'bedd7567-3ecc-5bd8-90a3-611c9f758d40',
          dstNetworkAddr: '10.1.1.0',
          dstNetworkLength: 24,
          nextHopPort: '78181522-c44d-52e7-96c9-801b2f7d5f66',
          srcNetworkAddr: '0.0.0.0',
          srcNetworkLength: 0,
          type: 'Normal',
        },
      ],
      [
        'PortLink',
        '3f0a6a70-d576-5f19-afe8-716588fbf223',
        { portId: null, peerId: '78181522-c44d-52e7-96c9-801b2f7d5f66' },
      ],
      ['Chain', '', { id: '401490dd-09be-5a37-ad59-a80ba47fb01c', tenantId: 'midonetkube', name: 'KUBE-NODE-node1' }],
      [
        'Port',
        'd1c5f0f1-d501-5330-b521-b2daaf3d238b',
        {
          id: '3779194d-91e0-51d0-98e0-9adc61e6ffc0',
          type: 'Bridge',
          outboundFilterId: '401490dd-09be-5a37-ad59-a80ba47fb01c',
        },
      ],
      [
        'HostInterfacePort',
        '8d1c9a52-3f0e-4b7a-9c1d-5e2f6a7b8c90',
        {
          hostId: '8d1c9a52-3f0e-4b7a-9c1d-5e2f6a7b8c90',
          portId: '3779194d-91e0-51d0-98e0-9adc61e6ffc0',
          interfaceName: 'midokube-mido',
        },
      ],
      [
        'Rule',
        '401490dd-09be-5a37-ad59-a80ba47fb01c',
        {
          id: 'a4660753-2d67-582b-b3ef-71c514602152',
          type: 'snat',
          dlType: 2048,
          nwSrcAddress: '10.1.1.2',
          nwSrcLength: 32,
          flowAction: 'continue',
          natTargets: [{ addressFrom: '10.1.1.1', addressTo: '10.1.1.1', portFrom: 30000, portTo: 60000 }],
        },
      ],
    ],
  },
  {
    name: 'node-address.4.node1-internalip-192.0.2.10-0f48ef8b45a088930611439a34ac2a171dfccac8',
    namespace: 'default',
    owner: 'Node/node1',
    resources: [
      [
        'Route',
        '21607839-c6b4-5b98-8aa1-89a1aab61bca',
        {
          id: '7823e060-8ada-57ea-a789-a462c41660bc',
          dstNetworkAddr: '192.0.2.10',
          dstNetworkLength: 32,
          nextHopGateway: '10.1.1.2',
          nextHopPort: '78181522-c44d-52e7-96c9-801b2f7d5f66',
          srcNetworkAddr: '0.0.0.0',
          srcNetworkLength: 0,
          type: 'Normal',
        },
      ],
    ],
  },
  {
    name: 'node-mac.4.node1-mac-0242c000020a-e8e20f59f3fa8dbef7a411b492c0de151bddce06',
    namespace: 'default',
    owner: 'Node/node1',
    resources: [
      [
        'MACPort',
        'd1c5f0f1-d501-5330-b521-b2daaf3d238b',
        { macAddr: '02:42:c0:00:02:0a', portId: '3779194d-91e0-51d0-98e0-9adc61e6ffc0' },
      ],
    ],
  },
  {
    name: 'node-arp.4.node1-ip-10.1.1.2-0242c000020a-6cf983dee18dc39ef261b02e90c51948d390d32c',
    namespace: 'default',
    owner: 'Node/node1',
    resources: [['IPv4MACPair', 'd1c5f0f1-d501-5330-b521-b2daaf3d238b', { ip: '10.1.1.2', mac: '02:42:c0:00:02:0a' }]],
  },
  {
    name: 'node-tunnel-endpoint.4.node2-192.0.2.11-51329ede-9b0f-5923-98ee-bf4ef08af54f-4a7e2b19-6c3d-4e8f-a1b2-c3d4e5f60718-cbaca8313a83bb5c919c0fde676ef499a97a9995',
    namespace: 'default',
    owner: 'Node/node2',
    resources: [
      [
        'TunnelZoneHost',
        '51329ede-9b0f-5923-98ee-bf4ef08af54f',
        { hostId: '4a7e2b19-6c3d-4e8f-a1b2-c3d4e5f60718', ipAddress: '192.0.2.11' },
      ],
    ],
  },
  {
    name: 'node.4.node2',
    namespace: 'default',
    owner: 'Node/node2',
    resources: [
      [
        'Bridge',
        '',
        {
          id: '3d977fdb-021e-55c3-8bed-97e656aa0d18',
          tenantId: 'midonetkube',
          name: 'node2',
          inboundFilterId: '23b6f94b-2fb5-55b0-9614-3cbb6d6dc17f',
        },
      ],
      ['Port', '3d977fdb-021e-55c3-8bed-97e656aa0d18', { id: 'bb1373bf-4f7f-5cbf-9a3c-1edf06c86750', type: 'Bridge' }],
      [
        'Port',
        '21607839-c6b4-5b98-8aa1-89a1aab61bca',
        {
          id: '3204dbc4-555e-537a-af58-a441bf400ce7',
          type: 'Router',
          portSubnet: ['10.1.2.1/24'],
          portMac: 'ac:ca:ba:15:b1:8a',
        },
      ],
      [
        'Route',
        '21607839-c6b4-5b98-8aa1-89a1aab61bca',
        {
          id: '652d4d9e-211d-57ec-ac0f-d99de9146290',
          dstNetworkAddr: '10.1.2.0',
          dstNetworkLength: 24,
          nextHopPort: '3204dbc4-555e-537a-af58-a441bf400ce7',
          srcNetworkAddr: '0.0.0.0',
          srcNetworkLength: 0,
          type: 'Normal',
        },
      ],
      [
        'PortLink',
        'bb1373bf-4f7f-5cbf-9a3c-1edf06c86750',
        { portId: null, peerId: '3204dbc4-555e-537a-af58-a441bf400ce7' },
      ],
      ['Chain', '', { id: 'e4495719-7f70-5ebd-8703-298c0cb52ce8', tenantId: 'midonetkube', name: 'KUBE-NODE-node2' }],
      [
        'Port',
        '3d977fdb-021e-55c3-8bed-97e656aa0d18',
        {
          id: '1b1567dd-965d-5649-a403-5c481e941b50',
          type: 'Bridge',
          outboundFilterId: 'e4495719-7f70-5ebd-8703-298c0cb52ce8',
        },
      ],
      [
        'HostInterfacePort',
        '4a7e2b19-6c3d-4e8f-a1b2-c3d4e5f60718',
        {
          hostId: '4a7e2b19-6c3d-4e8f-a1b2-c3d4e5f60718',
          portId: '1b1567dd-965d-5649-a403-5c481e941b50',
          interfaceName: 'midokube-mido',
        },
      ],
      [
        'Rule',
        'e4495719-7f70-5ebd-8703-298c0cb52ce8',
        {
          id: '68036e1a-66b8-5c18-b443-752fe363d316',
          type: 'snat',
          dlType: 2048,
          nwSrcAddress: '10.1.2.2',
          nwSrcLength: 32,
          flowAction: 'continue',
          natTargets: [{ addressFrom: '10.1.2.1', addressTo: '10.1.2.1', portFrom: 30000, portTo: 60000 }],
        },
      ],
    ],
  },
  {
    name: 'node-address.4.node2-internalip-192.0.2.11-6fbbc7c205bb6e24257e7c3e8b1d323c10b2b155',
    namespace: 'default',
    owner: 'Node/node2',
    resources: [
      [
        'Route',
        '21607839-c6b4-5b98-8aa1-89a1aab61bca',
        {
          id: '31656f75-b4a2-55d0-92cb-397a67631551',
          dstNetworkAddr: '192.0.2.11',
          dstNetworkLength: 32,
          nextHopGateway: '10.1.2.2',
          nextHopPort: '3204dbc4-555e-537a-af58-a441bf400ce7',
          srcNetworkAddr: '0.0.0.0',
          srcNetworkLength: 0,
          type: 'Normal',
        },
      ],
    ],
  },
  {
    name: 'node-address.4.node2-externalip-198.51.100.11-ec85b8e5a21a25d4908e41e1b683bfb730c3f77d',
    namespace: 'default',
    owner: 'Node/node2',
    resources: [
      [
        'Route',
        '21607839-c6b4-5b98-8aa1-89a1aab61bca',
        {
          id: '29eafa55-d482-52e0-80c1-40e3c5cd02c7',
          dstNetworkAddr: '198.51.100.11',
          dstNetworkLength: 32,
          nextHopGateway: '10.1.2.2',
          nextHopPort: '3204dbc4-555e-537a-af58-a441bf400ce7',
          srcNetworkAddr: '0.0.0.0',
          srcNetworkLength: 0,
          type: 'Normal',
        },
      ],
    ],
  },
  {
    name: 'pod.4.nginx',
    namespace: 'default',
    owner: 'Pod/nginx',
    resources: [
      ['Port', 'd1c5f0f1-d501-5330-b521-b2daaf3d238b', { id: '2116e331-6186-5900-b627-392aab45b2ec', type: 'Bridge' }],
      [
        'HostInterfacePort',
        '8d1c9a52-3f0e-4b7a-9c1d-5e2f6a7b8c90',
        {
          hostId: '8d1c9a52-3f0e-4b7a-9c1d-5e2f6a7b8c90',
          portId: '2116e331-6186-5900-b627-392aab45b2ec',
          interfaceName: 'mido1960ee39339',
        },
      ],
    ],
  },
  {
    name: 'pod-mac.4.nginx-mac-0a580a010104-b1c216a50d007c34cf75cdfb879a0fa637bc1716',
    namespace: 'default',
    owner: 'Pod/nginx',
    resources: [
      [
        'MACPort',
        'd1c5f0f1-d501-5330-b521-b2daaf3d238b',
        { macAddr: '0a:58:0a:01:01:04', portId: '2116e331-6186-5900-b627-392aab45b2ec' },
      ],
    ],
  },
  {
    name: 'pod-arp.4.nginx-ip-10.1.1.4-0a580a010104-0c8b7841aff7e34bf23a0eb5ce56a95471675408',
    namespace: 'default',
    owner: 'Pod/nginx',
    resources: [['IPv4MACPair', 'd1c5f0f1-d501-5330-b521-b2daaf3d238b', { ip: '10.1.1.4', mac: '0a:58:0a:01:01:04' }]],
  },
  {
    name: 'pod.4.web-0',
    namespace: 'default',
    owner: 'Pod/web-0',
    resources: [
      ['Port', 'd1c5f0f1-d501-5330-b521-b2daaf3d238b', { id: '0e646980-2007-550e-bb96-44dc505bd784', type: 'Bridge' }],
      [
        'HostInterfacePort',
        '8d1c9a52-3f0e-4b7a-9c1d-5e2f6a7b8c90',
        {
          hostId: '8d1c9a52-3f0e-4b7a-9c1d-5e2f6a7b8c90',
          portId: '0e646980-2007-550e-bb96-44dc505bd784',
          interfaceName: 'mido24d07f86e30',
        },
      ],
    ],
  },
  {
    name: 'pod.4.web-1',
    namespace: 'default',
    owner: 'Pod/web-1',
    resources: [
      ['Port', '3d977fdb-021e-55c3-8bed-97e656aa0d18', { id: '302e7209-3bd9-5336-a24d-e223dfc7c7c1', type: 'Bridge' }],
      [
        'HostInterfacePort',
        '4a7e2b19-6c3d-4e8f-a1b2-c3d4e5f60718',
        {
          hostId: '4a7e2b19-6c3d-4e8f-a1b2-c3d4e5f60718',
          portId: '302e7209-3bd9-5336-a24d-e223dfc7c7c1',
          interfaceName: 'mido85dffee674f',
        },
      ],
    ],
  },
  {
    name: 'service.4.web',
    namespace: 'default',
    owner: 'Service/web',
    resources: [
      [
        'Chain',
        '',
        { id: '98e99174-edfa-542e-88e6-3ca9a6215ea8', tenantId: 'midonetkube', name: 'KUBE-SVC-default/web/http' },
      ],
      [
        'Chain',
        '',
        { id: '9f03be14-a6d3-54e8-9422-678fcf644e2e', tenantId: 'midonetkube', name: 'KUBE-SVC-default/web/syslog' },
      ],
    ],
  },
  {
    name: 'service-port.4.default-web-http-10.96.0.20-6-80-a0afcec8cf63bca4237f7042adb79c75f14e4c32',
    namespace: 'default',
    owner: 'Service/web',
    resources: [
      [
        'Rule',
        '8ba7d5a7-f323-53d4-8522-ddb2c7158ef0',
        {
          id: 'dc223993-16ba-56be-8cb7-50cbd4083aaf',
          type: 'jump',
          dlType: 2048,
          nwDstAddress: '10.96.0.20',
          nwDstLength: 32,
          nwProto: 6,
          tpDst: { start: 80, end: 80 },
          jumpChainId: '98e99174-edfa-542e-88e6-3ca9a6215ea8',
        },
      ],
    ],
  },
  {
    name: 'service-port.4.default-web-syslog-10.96.0.20-17-514-74bfbabdafecb7106e53689e0cf90d3b7d570304',
    namespace: 'default',
    owner: 'Service/web',
    resources: [
      [
        'Rule',
        '8ba7d5a7-f323-53d4-8522-ddb2c7158ef0',
        {
          id: 'bf53eb6c-d3b7-5c02-81d1-7a2180cc0001',
          type: 'jump',
          dlType: 2048,
          nwDstAddress: '10.96.0.20',
          nwDstLength: 32,
          nwProto: 17,
          tpDst: { start: 514, end: 514 },
          jumpChainId: '9f03be14-a6d3-54e8-9422-678fcf644e2e',
        },
      ],
    ],
  },
  {
    name: 'endpoints-port.4.web-http-10.96.0.20-10.1.1.5-8080-tcp-e15a17e2d7565e993345ab28aa6df44f30a596bb',
    namespace: 'default',
    owner: 'Endpoints/web',
    resources: [
      [
        'Chain',
        '',
        {
          id: '04cfd038-64d7-518a-ae51-8685c40be5e0',
          tenantId: 'midonetkube',
          name: 'KUBE-SEP-web/http/10.96.0.20/10.1.1.5/8080/TCP',
        },
      ],
      [
        'Rule',
        '98e99174-edfa-542e-88e6-3ca9a6215ea8',
        {
          id: '631d186f-9d53-5606-bcfc-3d9756fd9326',
          type: 'jump',
          jumpChainId: '04cfd038-64d7-518a-ae51-8685c40be5e0',
        },
      ],
      [
        'Rule',
        '04cfd038-64d7-518a-ae51-8685c40be5e0',
        {
          id: '5897ca30-1d59-5f0e-87af-2bddac0554bf',
          type: 'dnat',
          flowAction: 'accept',
          natTargets: [{ addressFrom: '10.1.1.5', addressTo: '10.1.1.5', portFrom: 8080, portTo: 8080 }],
        },
      ],
      [
        'Rule',
        '04cfd038-64d7-518a-ae51-8685c40be5e0',
        {
          id: 'd70f4e8e-0202-5159-8d54-8937d7d06e2b',
          type: 'snat',
          dlType: 2048,
          nwSrcAddress: '10.1.1.5',
          nwSrcLength: 32,
          flowAction: 'continue',
          natTargets: [{ addressFrom: '10.96.0.20', addressTo: '10.96.0.20', portFrom: 30000, portTo: 60000 }],
        },
      ],
    ],
  },
  {
    name: 'endpoints-port.4.web-syslog-10.96.0.20-10.1.1.5-5514-udp-699241e9ceba77fae4f96a0cdd88208810bd1fea',
    namespace: 'default',
    owner: 'Endpoints/web',
    resources: [
      [
        'Chain',
        '',
        {
          id: '78e7ccfe-567e-5297-ab96-e1c6bc1fae0a',
          tenantId: 'midonetkube',
          name: 'KUBE-SEP-web/syslog/10.96.0.20/10.1.1.5/5514/UDP',
        },
      ],
      [
        'Rule',
        '9f03be14-a6d3-54e8-9422-678fcf644e2e',
        {
          id: 'abd98fa7-2a08-5fee-9460-6449cba2ed1d',
          type: 'jump',
          jumpChainId: '78e7ccfe-567e-5297-ab96-e1c6bc1fae0a',
        },
      ],
      [
        'Rule',
        '78e7ccfe-567e-5297-ab96-e1c6bc1fae0a',
        {
          id: '68b09aa4-b10d-5879-9f14-a9a2139c6c32',
          type: 'dnat',
          flowAction: 'accept',
          natTargets: [{ addressFrom: '10.1.1.5', addressTo: '10.1.1.5', portFrom: 5514, portTo: 5514 }],
        },
      ],
      [
        'Rule',
        '78e7ccfe-567e-5297-ab96-e1c6bc1fae0a',
        {
          id: '939372ce-c1d2-5a9b-b3d6-4763395d3bba',
          type: 'snat',
          dlType: 2048,
          nwSrcAddress: '10.1.1.5',
          nwSrcLength: 32,
          flowAction: 'continue',
          natTargets: [{ addressFrom: '10.96.0.20', addressTo: '10.96.0.20', portFrom: 30000, portTo: 60000 }],
        },
      ],
    ],
  },
  {
    name: 'endpoints-port.4.web-http-10.96.0.20-10.1.2.5-8080-tcp-d2aa4c4c53578c0893372cc6505bd3d89ae1ed66',
    namespace: 'default',
    owner: 'Endpoints/web',
    resources: [
      [
        'Chain',
        '',
        {
          id: 'ff764b11-e6bc-51e9-85a1-f795a8c38026',
          tenantId: 'midonetkube',
          name: 'KUBE-SEP-web/http/10.96.0.20/10.1.2.5/8080/TCP',
        },
      ],
      [
        'Rule',
        '98e99174-edfa-542e-88e6-3ca9a6215ea8',
        {
          id: '7e42807a-0129-58d3-a884-dfc81086d219',
          type: 'jump',
          jumpChainId: 'ff764b11-e6bc-51e9-85a1-f795a8c38026',
        },
      ],
      [
        'Rule',
        'ff764b11-e6bc-51e9-85a1-f795a8c38026',
        {
          id: 'e987bfee-d579-501a-86f0-72beb1cb3174',
          type: 'dnat',
          flowAction: 'accept',
          natTargets: [{ addressFrom: '10.1.2.5', addressTo: '10.1.2.5', portFrom: 8080, portTo: 8080 }],
        },
      ],
      [
        'Rule',
        'ff764b11-e6bc-51e9-85a1-f795a8c38026',
        {
          id: '04e0c370-8cb6-5036-8bda-f9b4f42fc99a',
          type: 'snat',
          dlType: 2048,
          nwSrcAddress: '10.1.2.5',
          nwSrcLength: 32,
          flowAction: 'continue',
          natTargets: [{ addressFrom: '10.96.0.20', addressTo: '10.96.0.20', portFrom: 30000, portTo: 60000 }],
        },
      ],
    ],
  },
  {
    name: 'endpoints-port.4.web-syslog-10.96.0.20-10.1.2.5-5514-udp-969ba5fd2bdf6000552bcd2455b6ac901d7f9b52',
    namespace: 'default',
    owner: 'Endpoints/web',
    resources: [
      [
        'Chain',
        '',
        {
          id: '1d75e73d-1496-5d48-8697-6ec4dee958f2',
          tenantId: 'midonetkube',
          name: 'KUBE-SEP-web/syslog/10.96.0.20/10.1.2.5/5514/UDP',
        },
      ],
      [
        'Rule',
        '9f03be14-a6d3-54e8-9422-678fcf644e2e',
        {
          id: 'dcc4317a-078e-59aa-9895-6dbeae99c539',
          type: 'jump',
          jumpChainId: '1d75e73d-1496-5d48-8697-6ec4dee958f2',
        },
      ],
      [
        'Rule',
        '1d75e73d-1496-5d48-8697-6ec4dee958f2',
        {
          id: '61232d75-50bb-5393-b24d-4d43676f2746',
          type: 'dnat',
          flowAction: 'accept',
          natTargets: [{ addressFrom: '10.1.2.5', addressTo: '10.1.2.5', portFrom: 5514, portTo: 5514 }],
        },
      ],
      [
        'Rule',
        '1d75e73d-1496-5d48-8697-6ec4dee958f2',
        {
          id: '344cdec2-f4ef-5021-92f5-afbcee07901c',
          type: 'snat',
          dlType: 2048,
          nwSrcAddress: '10.1.2.5',
          nwSrcLength: 32,
          flowAction: 'continue',
          natTargets: [{ addressFrom: '10.96.0.20', addressTo: '10.96.0.20', portFrom: 30000, portTo: 60000 }],
        },
      ],
    ],
  },
];

/**
 * The migration test's cluster as midonet-kubernetes left it: the sample cluster with the ClusterIP the embedded API
 * server gives (10.0.0.20) and a third endpoint address (10.1.1.4, listed last). Its Endpoints bug is in it: the
 * converter stored `&ep`, the address of its loop variable (pkg/converter/endpoints/converter.go, Go before 1.22),
 * so every endpoint of a Service port carries the rules of that port's last endpoint, 10.1.1.4, in its DNAT
 * (`natTargets`) and SNAT (`nwSrcAddress`) rules, under its own name and IDs.
 */
export const migratedClusterAsWritten: WrittenTranslation[] = [
  ...sampleClusterAsWritten.filter((t) => !t.name.startsWith('service-port.') && !t.name.startsWith('endpoints-port.')),
  {
    name: 'service-port.4.default-web-http-10.0.0.20-6-80-333651d1563639de46e5f4cb127f1e98ed7b1aa6',
    namespace: 'default',
    owner: 'Service/web',
    resources: [
      [
        'Rule',
        '8ba7d5a7-f323-53d4-8522-ddb2c7158ef0',
        {
          id: 'cf376462-be35-5735-a08d-8d1ef051c765',
          type: 'jump',
          dlType: 2048,
          nwDstAddress: '10.0.0.20',
          nwDstLength: 32,
          nwProto: 6,
          tpDst: { start: 80, end: 80 },
          jumpChainId: '98e99174-edfa-542e-88e6-3ca9a6215ea8',
        },
      ],
    ],
  },
  {
    name: 'service-port.4.default-web-syslog-10.0.0.20-17-514-d6f87d6bf73bb6e1c7882fa3fcfb9878113538e9',
    namespace: 'default',
    owner: 'Service/web',
    resources: [
      [
        'Rule',
        '8ba7d5a7-f323-53d4-8522-ddb2c7158ef0',
        {
          id: '2f8f3320-ddab-564a-9557-7206eb5ae0c6',
          type: 'jump',
          dlType: 2048,
          nwDstAddress: '10.0.0.20',
          nwDstLength: 32,
          nwProto: 17,
          tpDst: { start: 514, end: 514 },
          jumpChainId: '9f03be14-a6d3-54e8-9422-678fcf644e2e',
        },
      ],
    ],
  },
  {
    name: 'endpoints-port.4.web-http-10.0.0.20-10.1.1.5-8080-tcp-dee5d08e392b73ea5e05343c28f3d67eb4f52089',
    namespace: 'default',
    owner: 'Endpoints/web',
    resources: [
      [
        'Chain',
        '',
        {
          id: '28ee1875-9070-5e75-bb54-162667495558',
          tenantId: 'midonetkube',
          name: 'KUBE-SEP-web/http/10.0.0.20/10.1.1.5/8080/TCP',
        },
      ],
      [
        'Rule',
        '98e99174-edfa-542e-88e6-3ca9a6215ea8',
        {
          id: '8c7f3c17-2802-534a-ba4b-f2d084ee7511',
          type: 'jump',
          jumpChainId: '28ee1875-9070-5e75-bb54-162667495558',
        },
      ],
      [
        'Rule',
        '28ee1875-9070-5e75-bb54-162667495558',
        {
          id: '4f9fa159-0816-53bc-abf3-1e4d62a2f81e',
          type: 'dnat',
          flowAction: 'accept',
          natTargets: [{ addressFrom: '10.1.1.4', addressTo: '10.1.1.4', portFrom: 8080, portTo: 8080 }],
        },
      ],
      [
        'Rule',
        '28ee1875-9070-5e75-bb54-162667495558',
        {
          id: 'c7bc72f5-6a1c-55cf-bc58-951df78fcbfa',
          type: 'snat',
          dlType: 2048,
          nwSrcAddress: '10.1.1.4',
          nwSrcLength: 32,
          flowAction: 'continue',
          natTargets: [{ addressFrom: '10.0.0.20', addressTo: '10.0.0.20', portFrom: 30000, portTo: 60000 }],
        },
      ],
    ],
  },
  {
    name: 'endpoints-port.4.web-syslog-10.0.0.20-10.1.1.5-5514-udp-9bf48e2547bb8439f1485beda4c95acd9b7a820e',
    namespace: 'default',
    owner: 'Endpoints/web',
    resources: [
      [
        'Chain',
        '',
        {
          id: '53a1f3f2-2f6b-574d-85c7-3ace36fa0d67',
          tenantId: 'midonetkube',
          name: 'KUBE-SEP-web/syslog/10.0.0.20/10.1.1.5/5514/UDP',
        },
      ],
      [
        'Rule',
        '9f03be14-a6d3-54e8-9422-678fcf644e2e',
        {
          id: 'd2e0ae55-e9e2-5623-96f8-01d0e62d815c',
          type: 'jump',
          jumpChainId: '53a1f3f2-2f6b-574d-85c7-3ace36fa0d67',
        },
      ],
      [
        'Rule',
        '53a1f3f2-2f6b-574d-85c7-3ace36fa0d67',
        {
          id: '56f48f4f-2443-534b-a661-3beb428d0270',
          type: 'dnat',
          flowAction: 'accept',
          natTargets: [{ addressFrom: '10.1.1.4', addressTo: '10.1.1.4', portFrom: 5514, portTo: 5514 }],
        },
      ],
      [
        'Rule',
        '53a1f3f2-2f6b-574d-85c7-3ace36fa0d67',
        {
          id: '4d36700f-91b8-584d-ace2-ce36e36c786f',
          type: 'snat',
          dlType: 2048,
          nwSrcAddress: '10.1.1.4',
          nwSrcLength: 32,
          flowAction: 'continue',
          natTargets: [{ addressFrom: '10.0.0.20', addressTo: '10.0.0.20', portFrom: 30000, portTo: 60000 }],
        },
      ],
    ],
  },
  {
    name: 'endpoints-port.4.web-http-10.0.0.20-10.1.2.5-8080-tcp-4df13aa0b337b2603bb32359983d69ef39b32ee8',
    namespace: 'default',
    owner: 'Endpoints/web',
    resources: [
      [
        'Chain',
        '',
        {
          id: '1863fb12-6a56-56fa-b218-502ecaeee0c8',
          tenantId: 'midonetkube',
          name: 'KUBE-SEP-web/http/10.0.0.20/10.1.2.5/8080/TCP',
        },
      ],
      [
        'Rule',
        '98e99174-edfa-542e-88e6-3ca9a6215ea8',
        {
          id: '3616b7b7-b1c9-5ae6-bb63-1ce07b04f016',
          type: 'jump',
          jumpChainId: '1863fb12-6a56-56fa-b218-502ecaeee0c8',
        },
      ],
      [
        'Rule',
        '1863fb12-6a56-56fa-b218-502ecaeee0c8',
        {
          id: '918f8ac2-e4f1-5b69-834a-92602c9c8971',
          type: 'dnat',
          flowAction: 'accept',
          natTargets: [{ addressFrom: '10.1.1.4', addressTo: '10.1.1.4', portFrom: 8080, portTo: 8080 }],
        },
      ],
      [
        'Rule',
        '1863fb12-6a56-56fa-b218-502ecaeee0c8',
        {
          id: '764ebcfc-d685-5236-8a4b-a7b5350b62b1',
          type: 'snat',
          dlType: 2048,
          nwSrcAddress: '10.1.1.4',
          nwSrcLength: 32,
          flowAction: 'continue',
          natTargets: [{ addressFrom: '10.0.0.20', addressTo: '10.0.0.20', portFrom: 30000, portTo: 60000 }],
        },
      ],
    ],
  },
  {
    name: 'endpoints-port.4.web-syslog-10.0.0.20-10.1.2.5-5514-udp-4be993f93f1d66b93ef17e451564260f4e45284b',
    namespace: 'default',
    owner: 'Endpoints/web',
    resources: [
      [
        'Chain',
        '',
        {
          id: '9b06a0ee-12e5-58d5-9de0-73a0e5086d83',
          tenantId: 'midonetkube',
          name: 'KUBE-SEP-web/syslog/10.0.0.20/10.1.2.5/5514/UDP',
        },
      ],
      [
        'Rule',
        '9f03be14-a6d3-54e8-9422-678fcf644e2e',
        {
          id: 'd4852533-fa90-54d1-a25c-d625b3896caa',
          type: 'jump',
          jumpChainId: '9b06a0ee-12e5-58d5-9de0-73a0e5086d83',
        },
      ],
      [
        'Rule',
        '9b06a0ee-12e5-58d5-9de0-73a0e5086d83',
        {
          id: '46e2885e-b4d3-5653-9b14-fd811cc485ce',
          type: 'dnat',
          flowAction: 'accept',
          natTargets: [{ addressFrom: '10.1.1.4', addressTo: '10.1.1.4', portFrom: 5514, portTo: 5514 }],
        },
      ],
      [
        'Rule',
        '9b06a0ee-12e5-58d5-9de0-73a0e5086d83',
        {
          id: '31c6c28d-6508-51c6-8663-99a001e87f92',
          type: 'snat',
          dlType: 2048,
          nwSrcAddress: '10.1.1.4',
          nwSrcLength: 32,
          flowAction: 'continue',
          natTargets: [{ addressFrom: '10.0.0.20', addressTo: '10.0.0.20', portFrom: 30000, portTo: 60000 }],
        },
      ],
    ],
  },
  {
    name: 'endpoints-port.4.web-http-10.0.0.20-10.1.1.4-8080-tcp-6dfb262c3934814b42c6524e9db07f2ad7dc131b',
    namespace: 'default',
    owner: 'Endpoints/web',
    resources: [
      [
        'Chain',
        '',
        {
          id: 'd61a1156-44d2-506f-8ba1-0ac29881c59a',
          tenantId: 'midonetkube',
          name: 'KUBE-SEP-web/http/10.0.0.20/10.1.1.4/8080/TCP',
        },
      ],
      [
        'Rule',
        '98e99174-edfa-542e-88e6-3ca9a6215ea8',
        {
          id: '48b710bd-8175-5344-8472-58ed86d9fcd7',
          type: 'jump',
          jumpChainId: 'd61a1156-44d2-506f-8ba1-0ac29881c59a',
        },
      ],
      [
        'Rule',
        'd61a1156-44d2-506f-8ba1-0ac29881c59a',
        {
          id: '4f3a595c-7be4-5732-82c9-43eaa5e3ddc1',
          type: 'dnat',
          flowAction: 'accept',
          natTargets: [{ addressFrom: '10.1.1.4', addressTo: '10.1.1.4', portFrom: 8080, portTo: 8080 }],
        },
      ],
      [
        'Rule',
        'd61a1156-44d2-506f-8ba1-0ac29881c59a',
        {
          id: '71fdeed1-8583-5770-a83d-2929a1f6155b',
          type: 'snat',
          dlType: 2048,
          nwSrcAddress: '10.1.1.4',
          nwSrcLength: 32,
          flowAction: 'continue',
          natTargets: [{ addressFrom: '10.0.0.20', addressTo: '10.0.0.20', portFrom: 30000, portTo: 60000 }],
        },
      ],
    ],
  },
  {
    name: 'endpoints-port.4.web-syslog-10.0.0.20-10.1.1.4-5514-udp-f2d3004f50f13d89e77bdc08887375931f03b575',
    namespace: 'default',
    owner: 'Endpoints/web',
    resources: [
      [
        'Chain',
        '',
        {
          id: '3ea96cda-86ef-5016-a8dc-1b7bc9adaca3',
          tenantId: 'midonetkube',
          name: 'KUBE-SEP-web/syslog/10.0.0.20/10.1.1.4/5514/UDP',
        },
      ],
      [
        'Rule',
        '9f03be14-a6d3-54e8-9422-678fcf644e2e',
        {
          id: 'e1fc0640-2c69-511e-aaed-284ee9f5a545',
          type: 'jump',
          jumpChainId: '3ea96cda-86ef-5016-a8dc-1b7bc9adaca3',
        },
      ],
      [
        'Rule',
        '3ea96cda-86ef-5016-a8dc-1b7bc9adaca3',
        {
          id: '5a0e5d92-a04e-5e36-b814-4cf0d9dc319b',
          type: 'dnat',
          flowAction: 'accept',
          natTargets: [{ addressFrom: '10.1.1.4', addressTo: '10.1.1.4', portFrom: 5514, portTo: 5514 }],
        },
      ],
      [
        'Rule',
        '3ea96cda-86ef-5016-a8dc-1b7bc9adaca3',
        {
          id: '6cc0c7b0-5c4e-592e-8fd0-b24752fa36c4',
          type: 'snat',
          dlType: 2048,
          nwSrcAddress: '10.1.1.4',
          nwSrcLength: 32,
          flowAction: 'continue',
          natTargets: [{ addressFrom: '10.0.0.20', addressTo: '10.0.0.20', portFrom: 30000, portTo: 60000 }],
        },
      ],
    ],
  },
];

/** midonet-kubernetes' controllers, as the API server names a client-go program's field manager. */
export const MK_MANAGER = 'midonet-kube-controllers';

async function uidOf(core: k8s.CoreV1Api, owner: string, namespace: string): Promise<string> {
  const [kind, name] = owner.split('/') as [string, string];
  const read = {
    Node: () => core.readNode({ name }),
    Pod: () => core.readNamespacedPod({ name, namespace }),
    Service: () => core.readNamespacedService({ name, namespace }),
    Endpoints: () => core.readNamespacedEndpoints({ name, namespace }),
  }[kind];
  if (!read) throw new Error(`no owner kind ${kind}`);
  return (await read()).metadata!.uid!;
}

/** A Translation exactly as midonet-kubernetes' translationUpdater creates it (translation.go `updateOne`). */
export async function writeAsMidonetKubernetes(
  { core, custom }: { core: k8s.CoreV1Api; custom: k8s.CustomObjectsApi },
  t: { name: string; namespace: string; owner: string | null; resources: BackendResource[] },
): Promise<void> {
  const owner = t.owner && {
    kind: t.owner.split('/')[0]!,
    name: t.owner.split('/')[1]!,
    uid: await uidOf(core, t.owner, t.namespace),
  };
  await custom.createNamespacedCustomObject({
    ...TRANSLATION_API,
    namespace: t.namespace,
    fieldManager: MK_MANAGER,
    body: {
      apiVersion: 'midonet.org/v1',
      kind: 'Translation',
      metadata: {
        name: t.name,
        labels: owner ? { [OWNER_UID_LABEL]: owner.uid } : { [GLOBAL_LABEL]: '' },
        ownerReferences: owner ? [{ apiVersion: 'v1', kind: owner.kind, name: owner.name, uid: owner.uid }] : [],
        finalizers: [TRANSLATION_FINALIZER],
      },
      resources: t.resources,
    },
  });
}

/** A written resource as a Translation lists it. */
export const asResource = ([kind, parent, body]: WrittenTranslation['resources'][number]): BackendResource => ({
  kind,
  parent,
  body: JSON.stringify(body),
});
