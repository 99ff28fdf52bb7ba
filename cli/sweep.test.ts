import { Command } from 'commander';
import { connectClient } from '../platform/temporal-connection';
import { registerSweepCommand } from './sweep';

jest.mock('../platform/temporal-connection', () => ({
  connectClient: jest.fn(() => Promise.reject(new Error('no server in unit tests'))),
}));

function steward(...args: string[]): Promise<unknown> {
  const program = new Command('steward').exitOverride().configureOutput({ writeOut: () => {}, writeErr: () => {} });
  registerSweepCommand(program);
  return program.parseAsync(args, { from: 'user' });
}

describe('steward sweep flags, checked before any call to Temporal', () => {
  afterEach(() => expect(connectClient).not.toHaveBeenCalled());

  it('names what to sweep --sweep-backends, as the starter does: --backends is what an installation drives', async () => {
    await expect(steward('sweep', '--sweep-backends', 'peerpods')).rejects.toThrow(/^--sweep-backends: /);
    await expect(steward('sweep', '--sweep-backends', 'none')).rejects.toThrow(
      '--sweep-backends: none leaves nothing to sweep',
    );
  });

  it('still takes --backends, with a warning', async () => {
    const warnings: string[] = [];
    const write = jest.spyOn(process.stderr, 'write').mockImplementation((s) => warnings.push(String(s)) > 0);
    try {
      await expect(steward('sweep', '--backends', 'none')).rejects.toThrow('--sweep-backends: none leaves nothing');
    } finally {
      write.mockRestore();
    }
    expect(warnings).toEqual(['warning: --backends is deprecated: use --sweep-backends\n']);
  });
});

describe('steward sweep tenant', () => {
  const env = process.env.MIDONETKUBE_TENANT;
  afterEach(() => {
    if (env === undefined) delete process.env.MIDONETKUBE_TENANT;
    else process.env.MIDONETKUBE_TENANT = env;
  });

  /** The sweep's input as the workflow would be started with it; the start then fails, ending the command. */
  async function sweepInput(...args: string[]): Promise<unknown> {
    const start = jest.fn((..._: unknown[]) => Promise.reject(new Error('started')));
    jest.mocked(connectClient).mockResolvedValueOnce({
      workflow: { start },
      connection: { close: () => Promise.resolve() },
    } as never);
    await expect(steward('sweep', ...args)).rejects.toThrow('started');
    return (start.mock.calls[0]?.[1] as { args: unknown[] }).args[0];
  }

  it("is the starter's, MIDONETKUBE_TENANT, unless --tenant says otherwise", async () => {
    process.env.MIDONETKUBE_TENANT = 'cluster-a';
    expect(await sweepInput()).toMatchObject({ tenant: 'cluster-a' });
    expect(await sweepInput('--tenant', 'cluster-b')).toMatchObject({ tenant: 'cluster-b' });
  });
});
