// A developer's Temporal client configuration (a profile file, TLS, an API key, gRPC headers in the shell) must not
// reach the embedded stack's plaintext Temporal through the processes and commands started against it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTemporalConfig } from '../../platform/temporal-config';
import { temporalEnv, type StackInfo } from './stack';

const home = mkdtempSync(join(tmpdir(), 'steward-home-'));
mkdirSync(join(home, '.config', 'temporalio'), { recursive: true });
writeFileSync(
  join(home, '.config', 'temporalio', 'temporal.toml'),
  [
    '[profile.default]',
    'address = "prod.example:7233"',
    'namespace = "prod"',
    'api_key = "from-profile"',
    '[profile.default.tls]',
    '',
  ].join('\n'),
);
const shell: NodeJS.ProcessEnv = {
  HOME: home,
  TEMPORAL_API_KEY: 'from-shell',
  TEMPORAL_TLS: 'true',
  TEMPORAL_GRPC_META_X_TENANT: 'a',
};
const stackConfigFile = join(home, 'temporal-client.toml');
writeFileSync(stackConfigFile, '[profile.default]\naddress = "127.0.0.1:7233"\nnamespace = "default"\n');
const stackTemporal = (external: boolean): StackInfo['temporal'] => ({
  address: '127.0.0.1:7233',
  namespace: 'default',
  external,
  profile: 'dev',
  ...(external ? {} : { configFile: stackConfigFile }),
});

afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('temporalEnv', () => {
  it("reaches the stack's own Temporal in plaintext whatever the developer's profile and shell say", () => {
    // What the developer's shell alone would do to a process started against the stack.
    expect(loadTemporalConfig({}, shell)).toMatchObject({ namespace: 'prod', apiKey: 'from-shell' });
    const config = loadTemporalConfig({}, { ...shell, ...temporalEnv(stackTemporal(false), shell) });
    expect(config).toMatchObject({ address: '127.0.0.1:7233', namespace: 'default' });
    expect(config.tls).toBeUndefined();
    expect(config.apiKey).toBeUndefined();
    expect(config.metadata).toBeUndefined();
  });

  it("leaves a Temporal the user points at (TEMPORAL_ADDRESS) to the user's settings", () => {
    const config = loadTemporalConfig({}, { ...shell, ...temporalEnv(stackTemporal(true), shell) });
    expect(config).toMatchObject({ address: '127.0.0.1:7233', namespace: 'default', apiKey: 'from-shell' });
    expect(config.metadata).toEqual({ 'x-tenant': 'a' });
  });
});
