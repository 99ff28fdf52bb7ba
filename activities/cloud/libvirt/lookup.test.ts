import { parseDomainTable } from './lookup';

describe('virsh list --all', () => {
  it("reads each domain's name and state from the table, shut-off ones (no id) included", () => {
    const table = [
      ' Id   Name                     State',
      '-----------------------------------------',
      ' 3    podvm-web-1a2b3c4d       running',
      ' -    podvm-db-5e6f7a8b        shut off',
      ' 12   other                    in shutdown',
      '',
    ].join('\n');
    expect(parseDomainTable(table)).toEqual([
      { name: 'podvm-web-1a2b3c4d', state: 'running' },
      { name: 'podvm-db-5e6f7a8b', state: 'shut off' },
      { name: 'other', state: 'in shutdown' },
    ]);
  });
});
