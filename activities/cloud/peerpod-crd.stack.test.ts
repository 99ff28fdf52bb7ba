import * as k8s from '@kubernetes/client-node';
import { adminConfig, createNamespace } from '../../test/support/kubernetes';

const group = 'confidentialcontainers.org';
const version = 'v1alpha1';
const plural = 'peerpods';

describe('PeerPod CRD', () => {
  it("accepts a PeerPod as cloud-api-adaptor writes it, with upstream's status, and releases it by cloud-api-adaptor's patch", async () => {
    const kc = adminConfig();
    const namespace = await createNamespace(kc, 'steward-test-peerpod');
    const api = kc.makeApiClient(k8s.CustomObjectsApi);
    try {
      // k8sops/peerpod.go newPeerPod: name, finalizer, spec; the Pod owner is left out (no Pod runs here).
      const body = {
        apiVersion: `${group}/${version}`,
        kind: 'PeerPod',
        metadata: { name: 'nginx-resource-q7z9r', finalizers: ['peer.pod/finalizer'] },
        spec: { cloudProvider: 'libvirt', instanceID: '83611c21-025c-4794-b080-704b62ab7785' },
      };
      await api.createNamespacedCustomObject({ group, version, namespace, plural, body });
      await api.patchNamespacedCustomObjectStatus(
        {
          group,
          version,
          namespace,
          plural,
          name: body.metadata.name,
          body: [{ op: 'add', path: '/status', value: { cleand: true } }],
        },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch),
      );
      const stored = (await api.getNamespacedCustomObject({
        group,
        version,
        namespace,
        plural,
        name: body.metadata.name,
      })) as typeof body & { status: unknown };
      expect(stored.spec).toEqual(body.spec);
      expect(stored.status).toEqual({ cleand: true });

      await api.deleteNamespacedCustomObject({ group, version, namespace, plural, name: body.metadata.name });
      // ReleasePeerPod: removes every finalizer with one JSON patch.
      await api.patchNamespacedCustomObject(
        {
          group,
          version,
          namespace,
          plural,
          name: body.metadata.name,
          body: [{ op: 'remove', path: '/metadata/finalizers' }],
        },
        k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch),
      );
      await expect(
        api.getNamespacedCustomObject({ group, version, namespace, plural, name: body.metadata.name }),
      ).rejects.toThrow(/404|not found/i);
    } finally {
      await kc.makeApiClient(k8s.CoreV1Api).deleteNamespace({ name: namespace });
    }
  });
});
