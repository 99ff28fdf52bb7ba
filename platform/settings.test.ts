import { Command } from 'commander';
import { addSettingFlags, type Setting } from './settings';
import { temporalSettings } from './temporal-config';

const settings = {
  // The setting that was renamed (from --namespace), as the command line has it.
  temporalNamespace: temporalSettings.temporalNamespace,
  cloudProvider: {
    env: 'STEWARD_CLOUD_PROVIDER',
    arg: 'name',
    default: 'libvirt',
    description: 'cloud',
    whenUnset: 'no cloud',
  },
  midonetProject: { env: 'MIDONET_PROJECT', alias: 'MIDONETKUBE_MIDONET_PROJECT', arg: 'name', description: 'project' },
  midonetPassword: { env: 'MIDONET_PASSWORD', secret: true, arg: 'password', description: 'password' },
  apiKey: temporalSettings.apiKey,
} satisfies Record<string, Setting>;

/** Parses `args` with the settings' flags (after `before`'s own options); what the action got and what went to stderr. */
async function run(args: string[], before: (command: Command) => Command = (c) => c) {
  let got: Record<string, unknown> = {};
  const program = new Command('steward').exitOverride();
  addSettingFlags(before(program.command('x')), settings).action(
    (options: Record<string, unknown>) => void (got = options),
  );
  const warnings: string[] = [];
  const write = jest.spyOn(process.stderr, 'write').mockImplementation((s) => warnings.push(String(s)) > 0);
  try {
    await program.parseAsync(['x', ...args], { from: 'user' });
  } finally {
    write.mockRestore();
  }
  return { got, warnings, help: program.commands[0]!.helpInformation() };
}

describe('addSettingFlags', () => {
  it('takes the new flag without a warning', async () => {
    const { got, warnings } = await run(['--temporal-namespace', 'ops']);
    expect(got.temporalNamespace).toBe('ops');
    expect(warnings).toEqual([]);
  });

  it('takes the former flag for the new one, with a deprecation warning on stderr', async () => {
    const { got, warnings, help } = await run(['--namespace', 'ops']);
    expect(got.temporalNamespace).toBe('ops');
    expect(warnings).toEqual(['warning: --namespace is deprecated: use --temporal-namespace\n']);
    expect(help).toMatch(/--namespace <name> +deprecated: use --temporal-namespace/);
  });

  it('lets the new flag win when both are given', async () => {
    expect((await run(['--namespace', 'old', '--temporal-namespace', 'new'])).got.temporalNamespace).toBe('new');
  });

  it('leaves the former name to an option the command has already (the Kubernetes namespace)', async () => {
    const { got, warnings, help } = await run(['-n', 'web', '--temporal-namespace', 'ops'], (c) =>
      c.option('-n, --namespace <ns>', 'Kubernetes namespace'),
    );
    expect(got).toMatchObject({ namespace: 'web', temporalNamespace: 'ops' });
    expect(warnings).toEqual([]);
    expect(help).not.toContain('deprecated');
  });

  it('says in the help what an unset setting means when that is not its default', async () => {
    const { help } = await run([]);
    expect(help).toMatch(/--cloud-provider <name> +cloud \[STEWARD_CLOUD_PROVIDER, unset: no cloud\]/);
    expect(help).toMatch(/--temporal-namespace <name> +Temporal namespace \[TEMPORAL_NAMESPACE, default\s+default\]/);
  });

  it('gives a secret no flag, unless the upstream tool has one (temporal --api-key), and then says to prefer the variable', async () => {
    const { got, help } = await run(['--api-key', 'k']);
    expect(got.apiKey).toBe('k');
    expect(help).not.toContain('--midonet-password');
    expect(help).toMatch(/--api-key <key> +API key .*prefer\s+TEMPORAL_API_KEY\)/s);
  });

  it("names midonet-kubernetes' variable beside the setting's own in the help", async () => {
    expect((await run([])).help).toMatch(
      /--midonet-project <name> +project \[MIDONET_PROJECT or\s+MIDONETKUBE_MIDONET_PROJECT\]/,
    );
  });
});
