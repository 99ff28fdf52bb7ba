import { z } from 'zod';
import { parseSettings, type Flags } from '../platform/settings';
import { starterSettings } from '../starter/config';

/**
 * The MidoNet tenant, for the commands that act on the cluster's MidoNet objects themselves (sweep, adopt): the
 * starter's setting, flag and variable (MIDONETKUBE_TENANT, midonet-kubernetes' name), so one environment names it
 * for the installation and its commands alike.
 */
export const tenantSettings = {
  tenant: { ...starterSettings.tenant, description: "the cluster's MidoNet tenant, whose objects Steward manages" },
};

export const readTenant = (options: Flags): string =>
  parseSettings(tenantSettings, z.object({ tenant: z.string().min(1, 'must not be empty') }), options, process.env)
    .tenant;
