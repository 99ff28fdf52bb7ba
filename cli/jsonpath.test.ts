import { jsonPath } from './jsonpath';

const list = {
  items: [
    { kind: 'Pod', namespace: 'web', name: 'nginx', state: 'stuck', meta: { ports: [80, 443] } },
    { kind: 'Node', name: 'n1', state: 'ready' },
  ],
};

describe('jsonPath, as kubectl -o jsonpath= reads a template', () => {
  it.each([
    ['a field of a field', '{.items[0].name}', 'nginx'],
    ['every item, values separated by a space', '{.items[*].name}', 'nginx n1'],
    ['an index from the end', '{.items[-1].kind}', 'Node'],
    ['the root named $', '{$.items[1].state}', 'ready'],
    ['text around the expressions, kept as written', 'names: {.items[*].name}!', 'names: nginx n1!'],
    ['a quoted newline and tab', '{.items[0].name}{"\\t"}{.items[1].name}{"\\n"}', 'nginx\tn1\n'],
    ['an object or a list as JSON', '{.items[0].meta}', '{"ports":[80,443]}'],
    ['a missing field as nothing, as kubectl by default', '{.items[1].namespace}', ''],
    [
      'range over the items, each expression inside reading the item',
      '{range .items[*]}{.kind}/{.name}{"\\n"}{end}',
      'Pod/nginx\nNode/n1\n',
    ],
    ['a range inside a range', '{range .items[*]}{range .meta.ports[*]}{.}:{end}{end}', '80:443:'],
  ])('%s: %s', (_sentence, template, printed) => expect(jsonPath(template)(list)).toBe(printed));

  it.each([
    ['an unclosed brace', '{.items[*].name', 'unclosed "{"'],
    ['a range without its end', '{range .items[*]}{.name}', '{range} with no {end}'],
    ['an end without its range', '{.items}{end}', '{end} with no {range}'],
    ['a step kubectl would read but this does not (a filter)', '{.items[?(@.kind=="Pod")]}', 'cannot read'],
  ])('refuses %s before any value is read', (_sentence, template, message) =>
    expect(() => jsonPath(template)).toThrow(message),
  );
});
