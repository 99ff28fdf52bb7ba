import { Command } from 'commander';
import { connectClientWhenReachable } from '../platform/temporal-connection';
import { registerStarterCommand } from './starter';

jest.mock('../platform/temporal-connection', () => ({
  connectClientWhenReachable: jest.fn(() => Promise.reject(new Error('no server in unit tests'))),
}));

function steward(...args: string[]): Promise<unknown> {
  const program = new Command('steward').exitOverride().configureOutput({ writeOut: () => {}, writeErr: () => {} });
  registerStarterCommand(program);
  return program.parseAsync(args, { from: 'user' });
}

describe('steward starter arguments, checked before any connection', () => {
  afterEach(() => expect(connectClientWhenReachable).not.toHaveBeenCalled());

  it('stops on a bad setting, named by its flag and variable', async () => {
    await expect(steward('starter', '--debounce-window', 'soon')).rejects.toThrow(
      /--debounce-window \/ STEWARD_DEBOUNCE_WINDOW: must be a duration such as 90s, 10m or 1h, got "soon"/,
    );
  });

  it('takes the API key by --api-key, as the temporal CLI does, and rejects unknown flags', async () => {
    await expect(steward('starter', '--api-key', 'k', '--debounce-window', 'soon')).rejects.toThrow(
      /--debounce-window/,
    );
    await expect(steward('starter', '--api-token', 'k')).rejects.toThrow(/unknown option '--api-token'/);
  });
});
