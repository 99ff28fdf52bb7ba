import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadClientConfigProfile } from '@temporalio/envconfig';
import { Command } from 'commander';
import { addSettingFlags, ConfigError, type Flags } from './settings';
import { defaultConfigFile, loadTemporalConfig, redactedTemporal, temporalSettings } from './temporal-config';

const dir = mkdtempSync(join(tmpdir(), 'steward-temporal-toml-'));
const pemFile = (name: string) => {
  const file = join(dir, name);
  writeFileSync(file, `-----BEGIN ${name}-----\n`);
  return file;
};
const envCert = pemFile('env-cert.pem');
const envKey = pemFile('env-key.pem');

const write = (name: string, toml: string) => {
  const file = join(dir, name);
  writeFileSync(file, toml);
  return file;
};

const file = write(
  'temporal.toml',
  `
[profile.default]
address = "default.example:7233"

[profile.prod]
address = "prod.example:7233"
namespace = "prod-ns"
api_key = "profile-key"
grpc_meta = { "x-tenant" = "tenant-42" }

[profile.prod.tls]
server_name = "temporal.prod"
client_cert_data = "-----BEGIN CERTIFICATE-----"
client_key_data = "-----BEGIN PRIVATE KEY-----"

[profile.staging]
address = "staging.example:7233"

[profile.plain]
address = "plain.example:7233"
tls = { disabled = true }

[profile.broken]
address = "no port"
`,
);

/** The messages of the ConfigError `load` throws. */
function issues(load: () => unknown): string[] {
  try {
    load();
  } catch (error) {
    if (error instanceof ConfigError) return error.issues;
    throw error;
  }
  throw new Error('no ConfigError');
}

describe("Temporal's client configuration file (profiles)", () => {
  const inFile = { TEMPORAL_CONFIG_FILE: file };

  it.each([
    ['the profile "default" when none is named', {}, inFile, 'default.example:7233'],
    ['the profile TEMPORAL_PROFILE names', {}, { ...inFile, TEMPORAL_PROFILE: 'prod' }, 'prod.example:7233'],
    [
      '--profile over TEMPORAL_PROFILE',
      { profile: 'staging' },
      { ...inFile, TEMPORAL_PROFILE: 'prod' },
      'staging.example:7233',
    ],
    ['--config-file as TEMPORAL_CONFIG_FILE', { configFile: file, profile: 'prod' }, {}, 'prod.example:7233'],
    ['the variable over the profile', {}, { ...inFile, TEMPORAL_PROFILE: 'prod', TEMPORAL_ADDRESS: 'env:1' }, 'env:1'],
    [
      'the flag over the variable',
      { address: 'flag:2' },
      { ...inFile, TEMPORAL_PROFILE: 'prod', TEMPORAL_ADDRESS: 'env:1' },
      'flag:2',
    ],
    ["Steward's default with no file and no profile", {}, {}, '127.0.0.1:7233'],
  ])('takes %s', (_sentence, flags, env, address) => {
    expect(loadTemporalConfig(flags, env).address).toBe(address);
  });

  it("takes a profile's namespace, API key, TLS (PEM written in the file, server name) and gRPC headers", () => {
    expect(loadTemporalConfig({ profile: 'prod' }, inFile)).toMatchObject({
      namespace: 'prod-ns',
      apiKey: 'profile-key',
      tls: {
        clientCertPem: '-----BEGIN CERTIFICATE-----',
        clientKeyPem: '-----BEGIN PRIVATE KEY-----',
        serverName: 'temporal.prod',
      },
      metadata: { 'x-tenant': 'tenant-42' },
    });
  });

  it("lets files named by variable replace the profile's PEM, and a variable's namespace and API key win", () => {
    const env = {
      ...inFile,
      TEMPORAL_PROFILE: 'prod',
      TEMPORAL_NAMESPACE: 'env-ns',
      TEMPORAL_TLS_CLIENT_CERT_PATH: envCert,
      TEMPORAL_TLS_CLIENT_KEY_PATH: envKey,
    };
    const config = loadTemporalConfig({ apiKey: 'flag-key' }, { ...env, TEMPORAL_API_KEY: 'env-key' });
    expect(config).toMatchObject({ namespace: 'env-ns', apiKey: 'flag-key' });
    expect(config.tls).toEqual({ clientCertFile: envCert, clientKeyFile: envKey, serverName: 'temporal.prod' });
    expect(loadTemporalConfig({}, { ...env, TEMPORAL_API_KEY: 'env-key' }).apiKey).toBe('env-key');
  });

  it('connects in plaintext where the profile disables TLS, unless a variable turns it on', () => {
    expect(loadTemporalConfig({ profile: 'plain' }, inFile).tls).toBeUndefined();
    expect(loadTemporalConfig({ profile: 'plain' }, { ...inFile, TEMPORAL_TLS: 'true' }).tls).toEqual({});
  });

  it('refuses a profile not in the file, naming the file, the profile and the ones it has', () => {
    expect(issues(() => loadTemporalConfig({ profile: 'qa' }, inFile))).toEqual([
      `--profile / TEMPORAL_PROFILE: no profile "qa" in ${file} (it has default, prod, staging, plain, broken)`,
    ]);
  });

  it('refuses a named profile where there is no file at all', () => {
    expect(issues(() => loadTemporalConfig({ profile: 'prod' }, {}))).toEqual([
      '--profile / TEMPORAL_PROFILE: no configuration file to read profile "prod" from (TEMPORAL_CONFIG_FILE unset, and no home directory in the environment)',
    ]);
    const home = mkdtempSync(join(dir, 'home-'));
    expect(issues(() => loadTemporalConfig({}, { HOME: home, TEMPORAL_PROFILE: 'prod' }))).toEqual([
      `--profile / TEMPORAL_PROFILE: no profile "prod" in ${join(home, '.config', 'temporalio', 'temporal.toml')} (no such file)`,
    ]);
  });

  it('refuses a file that is not TOML, naming it and the profile', () => {
    const bad = write('bad.toml', '[profile.prod\naddress = 1\n');
    const [issue, ...more] = issues(() => loadTemporalConfig({ profile: 'prod' }, { TEMPORAL_CONFIG_FILE: bad }));
    expect(more).toEqual([]);
    expect(issue).toMatch(new RegExp(`^${bad} \\(profile "prod"\\): `));
  });

  it('refuses a file named that is not there, rather than run on the defaults', () => {
    const missing = join(dir, 'missing.toml');
    expect(issues(() => loadTemporalConfig({ configFile: missing }, {}))).toEqual([
      `--config-file / TEMPORAL_CONFIG_FILE: cannot read file "${missing}"`,
    ]);
  });

  it('says a refused value came from the profile, since neither its flag nor its variable was given', () => {
    expect(issues(() => loadTemporalConfig({ profile: 'broken' }, inFile))).toEqual([
      `--address / TEMPORAL_ADDRESS (from profile "broken" of ${file}): must be host:port, got "no port"`,
    ]);
  });

  it("keeps the API key, the client key's PEM and the headers' values out of what is logged", () => {
    const logged = JSON.stringify(redactedTemporal(loadTemporalConfig({ profile: 'prod' }, inFile)));
    expect(logged).not.toMatch(/profile-key|PRIVATE KEY|tenant-42/);
    expect(logged).toContain('"x-tenant":"[redacted]"');
    expect(logged).toContain('BEGIN CERTIFICATE');
  });

  it("takes the PEM itself from TEMPORAL_TLS_*_DATA, as Temporal's CLI and SDKs do, and implies TLS", () => {
    const env = {
      TEMPORAL_TLS_CLIENT_CERT_DATA: '-----BEGIN CERTIFICATE-----\nenv',
      TEMPORAL_TLS_CLIENT_KEY_DATA: '-----BEGIN PRIVATE KEY-----\nenv',
      TEMPORAL_TLS_SERVER_CA_CERT_DATA: '-----BEGIN CERTIFICATE-----\nca',
    };
    expect(loadTemporalConfig({}, env).tls).toEqual({
      clientCertPem: env.TEMPORAL_TLS_CLIENT_CERT_DATA,
      clientKeyPem: env.TEMPORAL_TLS_CLIENT_KEY_DATA,
      caPem: env.TEMPORAL_TLS_SERVER_CA_CERT_DATA,
    });
    const flags = { tlsCertData: '-----BEGIN CERTIFICATE-----\nflag', tlsKeyData: '-----BEGIN PRIVATE KEY-----\nflag' };
    expect(loadTemporalConfig(flags, env).tls).toMatchObject({ clientCertPem: flags.tlsCertData });
  });

  it.each([
    [
      "a variable's PEM replaces the profile's",
      { TEMPORAL_TLS_CLIENT_CERT_DATA: '-----BEGIN CERTIFICATE-----\nenv' },
      { clientCertPem: '-----BEGIN CERTIFICATE-----\nenv', clientKeyPem: '-----BEGIN PRIVATE KEY-----' },
    ],
    [
      "a variable's file replaces the profile's PEM",
      { TEMPORAL_TLS_CLIENT_CERT_PATH: envCert },
      { clientCertFile: envCert, clientKeyPem: '-----BEGIN PRIVATE KEY-----' },
    ],
  ])('with a profile: %s, each file on its own', (_sentence, vars, tls) => {
    const config = loadTemporalConfig({ profile: 'prod' }, { ...inFile, ...vars });
    expect(config.tls).toEqual({ ...tls, serverName: 'temporal.prod' });
  });

  it('refuses a file given both as a path and as PEM, as the temporal CLI does, and PEM that is a path', () => {
    const env = { TEMPORAL_TLS_CLIENT_CERT_PATH: envCert, TEMPORAL_TLS_CLIENT_KEY_PATH: envKey };
    expect(issues(() => loadTemporalConfig({ tlsCertData: '-----BEGIN CERTIFICATE-----' }, env))).toEqual([
      '--tls-cert-data / TEMPORAL_TLS_CLIENT_CERT_DATA: cannot be used with --tls-cert-path / TEMPORAL_TLS_CLIENT_CERT_PATH: give the file one way',
    ]);
    expect(issues(() => loadTemporalConfig({}, { TEMPORAL_TLS_SERVER_CA_CERT_DATA: '/etc/tls/ca.crt' }))).toEqual([
      '--tls-ca-data / TEMPORAL_TLS_SERVER_CA_CERT_DATA: must be PEM text (-----BEGIN …); a file goes in the *-path setting',
    ]);
  });

  it('takes gRPC headers from TEMPORAL_GRPC_META_<KEY> over the profile, and --grpc-meta over both, as the temporal CLI', () => {
    const env = {
      ...inFile,
      TEMPORAL_PROFILE: 'prod',
      TEMPORAL_GRPC_META_X_TENANT: 'env-tenant',
      TEMPORAL_GRPC_META_CF_ACCESS_CLIENT_ID: 'id',
    };
    expect(loadTemporalConfig({}, env).metadata).toEqual({ 'x-tenant': 'env-tenant', 'cf-access-client-id': 'id' });
    const flags = { grpcMeta: 'X-Tenant=flag-tenant\nx-trace=a=b' };
    expect(loadTemporalConfig(flags, env).metadata).toEqual({
      'x-tenant': 'flag-tenant',
      'cf-access-client-id': 'id',
      'x-trace': 'a=b',
    });
    expect(loadTemporalConfig({}, { TEMPORAL_GRPC_META_X_ONLY: 'v' }).metadata).toEqual({ 'x-only': 'v' });
  });

  it('takes --grpc-meta any number of times, as the temporal CLI does', async () => {
    let flags: Flags = {};
    const program = new Command('steward').exitOverride();
    addSettingFlags(program.command('x'), temporalSettings).action((options: Flags) => void (flags = options));
    await program.parseAsync(['x', '--grpc-meta', 'x-a=1', '--grpc-meta', 'x-b=2'], { from: 'user' });
    expect(loadTemporalConfig(flags, {}).metadata).toEqual({ 'x-a': '1', 'x-b': '2' });
  });

  it("removes the profile's header with an empty TEMPORAL_GRPC_META_<KEY>, as envconfig does", () => {
    const env = { ...inFile, TEMPORAL_PROFILE: 'prod', TEMPORAL_GRPC_META_X_TENANT: '' };
    expect(loadTemporalConfig({}, env).metadata).toBeUndefined();
  });

  it('refuses a --grpc-meta without a key, without showing it (it may be a token)', () => {
    expect(issues(() => loadTemporalConfig({ grpcMeta: 'x-a=1\nsecret-token' }, {}))).toEqual([
      '--grpc-meta / TEMPORAL_GRPC_META_<KEY>: must be key=value, with a key before the =',
    ]);
  });

  it.each([
    ['XDG_CONFIG_HOME', (root: string) => ({ XDG_CONFIG_HOME: root }), (root: string) => root],
    ['HOME without XDG_CONFIG_HOME', (root: string) => ({ HOME: root }), (root: string) => join(root, '.config')],
  ])('finds the default file where @temporalio/envconfig does, from %s', (_from, envOf, configDir) => {
    const root = mkdtempSync(join(dir, 'config-'));
    const env = envOf(root);
    mkdirSync(join(configDir(root), 'temporalio'), { recursive: true });
    writeFileSync(join(configDir(root), 'temporalio', 'temporal.toml'), '[profile.default]\naddress = "found:7233"\n');
    expect(defaultConfigFile(env)).toBe(join(configDir(root), 'temporalio', 'temporal.toml'));
    expect(loadClientConfigProfile({ overrideEnvVars: env, disableEnv: true }).address).toBe('found:7233');
    expect(loadTemporalConfig({}, env).address).toBe('found:7233');
  });
});
