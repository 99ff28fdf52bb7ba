import { diffBody } from './compare';

describe('diffBody', () => {
  const cases: Array<
    [string, Record<string, unknown>, Record<string, unknown>, string[], ReturnType<typeof diffBody>]
  > = [
    [
      'fields the server adds (URIs, tunnel keys) are not differences',
      { id: 'a', name: 'n' },
      { id: 'a', name: 'n', uri: 'http://x', tunnelKey: 7 },
      [],
      [],
    ],
    [
      'a changed scalar is reported with both values',
      { name: 'new' },
      { name: 'old' },
      [],
      [{ field: 'name', desired: 'new', observed: 'old' }],
    ],
    [
      'a field asked for but absent on the server is reported as null',
      { inboundFilterId: 'c' },
      {},
      [],
      [{ field: 'inboundFilterId', desired: 'c', observed: null }],
    ],
    ['null asked for equals a field the server leaves out', { portId: null }, {}, [], []],
    [
      'null asked for differs from a value the server holds',
      { inboundFilterId: null },
      { inboundFilterId: 'c' },
      [],
      [{ field: 'inboundFilterId', desired: null, observed: 'c' }],
    ],
    [
      'nested objects in arrays are compared field by field, extra server fields ignored',
      { natTargets: [{ addressFrom: '10.0.0.1', portFrom: 1 }] },
      { natTargets: [{ addressFrom: '10.0.0.2', portFrom: 1, extra: true }] },
      [],
      [{ field: 'natTargets[0].addressFrom', desired: '10.0.0.1', observed: '10.0.0.2' }],
    ],
    [
      'arrays of another length differ as a whole',
      { portSubnet: ['10.1.0.1/24'] },
      { portSubnet: [] },
      [],
      [{ field: 'portSubnet', desired: ['10.1.0.1/24'], observed: [] }],
    ],
    [
      'ignored top-level fields never differ',
      { position: 1, type: 'jump' },
      { position: 3, type: 'jump' },
      ['position'],
      [],
    ],
    [
      'a number is not equal to its string form',
      { dlType: 2048 },
      { dlType: '2048' },
      [],
      [{ field: 'dlType', desired: 2048, observed: '2048' }],
    ],
  ];
  it.each(cases)('%s', (_what, desired, observed, ignore, expected) => {
    expect(diffBody(desired, observed, ignore)).toEqual(expected);
  });
});
