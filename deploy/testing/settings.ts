import { cloudSettings } from '../../activities/cloud/config';
import { workerSettings } from '../../cli/worker';
import { starterSettings } from '../../starter/config';

/** Every variable the worker or the starter reads. Both take the one ConfigMap, so a key must be either's. */
export const knownSettings = new Set(
  [workerSettings, cloudSettings, starterSettings].flatMap((table) =>
    Object.values(table).map((setting) => setting.env),
  ),
);
