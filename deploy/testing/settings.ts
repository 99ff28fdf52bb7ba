import { cloudSettings } from '../../activities/cloud/config';
import { workerSettings } from '../../cli/worker';
import { starterSettings } from '../../starter/config';
import type { Setting } from '../../platform/settings';

/**
 * Every variable the worker or the starter reads, an upstream alias included. Both take the one ConfigMap, so a key must be either's. Besides
 * their own tables: the API server's address, which client-node's in-cluster configuration reads (the MidoNet
 * profile gives it, deploy/manifests/steward.yaml).
 */
export const knownSettings = new Set([
  ...[workerSettings, cloudSettings, starterSettings].flatMap((table) =>
    Object.values(table).flatMap((setting: Setting) => [setting.env, ...(setting.alias ? [setting.alias] : [])]),
  ),
  'KUBERNETES_SERVICE_HOST',
  'KUBERNETES_SERVICE_PORT',
]);
