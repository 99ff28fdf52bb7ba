/**
 * kubectl's `-o jsonpath=<template>` (https://kubernetes.io/docs/reference/kubectl/jsonpath/), the part scripts use:
 * text around `{.a.b}`, `{.items[*].name}`, `{.items[0]}`, `{range .items[*]}…{end}` and quoted text (`{"\n"}`). Written
 * here because JSONPath libraries evaluate a path, not kubectl's template around it (text, range and end), and these
 * few steps are all the commands' outputs need. A missing field prints nothing, as kubectl's default
 * (--allow-missing-template-keys) does.
 */

type Step = { field: string } | { index: number } | { all: true };
type Node = { text: string } | { path: Step[] } | { range: Step[]; body: Node[] };

/** The template's `{…}` and the text between them; throws on a template kubectl would refuse too. */
function tokens(template: string): string[] {
  const parts: string[] = [];
  let at = 0;
  while (at < template.length) {
    const open = template.indexOf('{', at);
    if (open < 0) {
      parts.push(template.slice(at));
      break;
    }
    if (open > at) parts.push(template.slice(at, open));
    // A quoted `}` does not close the expression.
    const close = /^\{(?:"(?:[^"\\]|\\.)*"|[^}"])*\}/.exec(template.slice(open))?.[0];
    if (!close) throw new Error(`unclosed "{" at ${open} of ${template}`);
    parts.push(close);
    at = open + close.length;
  }
  return parts;
}

function parsePath(text: string): Step[] {
  const path = text.replace(/^[$@]/, '');
  if (path === '' || path === '.') return [];
  const steps: Step[] = [];
  const step = /\.([^.[\]\s]+)|\[(\*|-?\d+)\]/y;
  while (step.lastIndex < path.length) {
    const at = step.lastIndex;
    const match = step.exec(path);
    if (!match) throw new Error(`cannot read "${text}" at ${at}: .field, [n] and [*] are understood`);
    const [, field, index] = match;
    steps.push(field ? { field } : index === '*' ? { all: true } : { index: Number(index) });
  }
  return steps;
}

function parse(template: string): Node[] {
  const stack: { range?: Step[]; nodes: Node[] }[] = [{ nodes: [] }];
  for (const token of tokens(template)) {
    const top = stack.at(-1)!;
    if (!token.startsWith('{')) {
      top.nodes.push({ text: token });
      continue;
    }
    const expression = token.slice(1, -1).trim();
    if (expression.startsWith('"')) top.nodes.push({ text: JSON.parse(expression) as string });
    else if (expression.startsWith('range ')) stack.push({ range: parsePath(expression.slice(6).trim()), nodes: [] });
    else if (expression === 'end') {
      const done = stack.pop()!;
      if (!done.range) throw new Error('{end} with no {range}');
      stack.at(-1)!.nodes.push({ range: done.range, body: done.nodes });
    } else top.nodes.push({ path: parsePath(expression) });
  }
  if (stack.length !== 1) throw new Error('{range} with no {end}');
  return stack[0]!.nodes;
}

/** What one step reaches from a value: nothing where it does not apply. */
function reach(value: unknown, step: Step): unknown[] {
  if (Array.isArray(value)) {
    const items = value as unknown[];
    if ('all' in step) return items;
    if ('index' in step) return step.index < items.length && step.index >= -items.length ? [items.at(step.index)] : [];
    return [];
  }
  if (!value || typeof value !== 'object') return [];
  const fields = value as Record<string, unknown>;
  if ('all' in step) return Object.values(fields);
  return 'field' in step && step.field in fields ? [fields[step.field]] : [];
}

const select = (value: unknown, steps: Step[]) =>
  steps.reduce<unknown[]>((values, step) => values.flatMap((v) => reach(v, step)), [value]);

const printed = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

function render(nodes: Node[], value: unknown): string {
  return nodes
    .map((node) => {
      if ('text' in node) return node.text;
      if ('path' in node) return select(value, node.path).map(printed).join(' ');
      return select(value, node.range)
        .map((item) => render(node.body, item))
        .join('');
    })
    .join('');
}

/** The template compiled once: a syntax error is thrown here, before the command does anything. */
export function jsonPath(template: string): (value: unknown) => string {
  const nodes = parse(template);
  return (value) => render(nodes, value);
}
