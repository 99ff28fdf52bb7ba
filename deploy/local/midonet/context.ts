// What every route module receives: the store and the runtime switches that change API behaviour.
import type { Store } from './store';

export interface EmulatorConfig {
  /**
   * `token` (default): only tokens issued by POST /login are accepted, as with a real identity provider.
   * `mock`: MidoNet's default MockAuthService, which accepts any token or none (ref §1.1).
   */
  auth: 'token' | 'mock';
  /** When set, POST /login checks these Basic credentials; otherwise any well-formed ones pass. */
  credentials: { username: string; password: string } | null;
  /** Status of a duplicate MAC/ARP entry POST: 500 as upstream (MNA-1315, ref §1.4) or the saner 409. */
  duplicateTableEntryStatus: 409 | 500;
}

export const defaultConfig = (): EmulatorConfig => ({
  auth: 'token',
  credentials: null,
  duplicateTableEntryStatus: 500,
});

export interface Ctx {
  store: Store;
  config: EmulatorConfig;
}
