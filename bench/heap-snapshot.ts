// A V8 heap snapshot (`.heapsnapshot`, as `--heapsnapshot-signal` or `v8.writeHeapSnapshot` writes it) read without
// DevTools: what each constructor holds (shallow), and which objects hold the most (retained, from the dominator
// tree), with the path that holds them. A worker's snapshot at 5,000 Pods is some hundreds of MB: the file is read as
// bytes and its number arrays scanned, never parsed as one JSON string (V8 caps a string at 512 MB).
import { readFileSync } from 'node:fs';

interface Meta {
  node_fields: string[];
  node_types: [string[], ...unknown[]];
  edge_fields: string[];
  edge_types: [string[], ...unknown[]];
}

export interface HeapGraph {
  nodeCount: number;
  /** Per node: its type's name, its name (a constructor, a string's text, a root's label), its own size in bytes. */
  type(node: number): string;
  name(node: number): string;
  selfSize(node: number): number;
  /** Its outgoing edges `[firstEdge(node), firstEdge(node + 1))`. */
  firstEdge(node: number): number;
  edgeType(edge: number): string;
  /** A property's name, or an element's index as `[i]`. */
  edgeName(edge: number): string;
  edgeTarget(edge: number): number;
}

const indexAfter = (buf: Buffer, needle: string, from: number) => {
  const at = buf.indexOf(needle, from, 'latin1');
  if (at < 0) throw new Error(`heap snapshot: no ${needle} after byte ${from}`);
  return at + needle.length;
};

/** The unsigned integers of a JSON array starting at `from` (just past its `[`), and the offset past its `]`. */
function scanIntegers(buf: Buffer, from: number, count: number): { values: Uint32Array; end: number } {
  const values = new Uint32Array(count);
  let n = 0;
  let value = 0;
  let inNumber = false;
  let i = from;
  for (; i < buf.length; i++) {
    const c = buf[i]!;
    if (c >= 48 && c <= 57) {
      value = value * 10 + (c - 48);
      inNumber = true;
      continue;
    }
    if (inNumber) {
      if (n === count) throw new Error(`heap snapshot: more than ${count} values at byte ${i}`);
      values[n++] = value;
      value = 0;
      inNumber = false;
    }
    if (c === 93 /* ] */) break;
  }
  if (n !== count) throw new Error(`heap snapshot: ${n} values where the header says ${count}`);
  return { values, end: i + 1 };
}

/** The JSON strings of an array starting at `from` (just past its `[`). */
function scanStrings(buf: Buffer, from: number): string[] {
  const strings: string[] = [];
  let i = from;
  for (;;) {
    while (buf[i] !== 34 /* " */ && buf[i] !== 93 /* ] */) i++;
    if (buf[i] === 93) return strings;
    let end = i + 1;
    let escaped = false;
    for (; buf[end] !== 34 || escaped; end++) escaped = buf[end] === 92 /* \ */ && !escaped;
    const raw = buf.toString('utf8', i, end + 1);
    strings.push(raw.includes('\\') ? (JSON.parse(raw) as string) : raw.slice(1, -1));
    i = end + 1;
  }
}

export function parseHeapSnapshot(buf: Buffer): HeapGraph {
  const nodesAt = indexAfter(buf, '"nodes":[', 0);
  const header = JSON.parse(`${buf.toString('utf8', 0, nodesAt - '"nodes":['.length).replace(/,\s*$/, '')}}`) as {
    snapshot: { meta: Meta; node_count: number; edge_count: number };
  };
  const { meta, node_count: nodeCount, edge_count: edgeCount } = header.snapshot;
  const nf = meta.node_fields.length;
  const ef = meta.edge_fields.length;
  const field = (fields: string[], name: string) => {
    const at = fields.indexOf(name);
    if (at < 0) throw new Error(`heap snapshot: no field ${name} in ${fields.join(', ')}`);
    return at;
  };
  const [nType, nName, nSize, nEdges] = ['type', 'name', 'self_size', 'edge_count'].map((f) =>
    field(meta.node_fields, f),
  ) as [number, number, number, number];
  const [eType, eName, eTo] = ['type', 'name_or_index', 'to_node'].map((f) => field(meta.edge_fields, f)) as [
    number,
    number,
    number,
  ];
  const nodes = scanIntegers(buf, nodesAt, nodeCount * nf);
  const edges = scanIntegers(buf, indexAfter(buf, '"edges":[', nodes.end), edgeCount * ef);
  const strings = scanStrings(buf, indexAfter(buf, '"strings":[', edges.end));
  const first = new Uint32Array(nodeCount + 1);
  for (let n = 0; n < nodeCount; n++) first[n + 1] = first[n]! + nodes.values[n * nf + nEdges]!;
  const nodeTypes = meta.node_types[0];
  const edgeTypes = meta.edge_types[0];
  const edgeType = (e: number) => edgeTypes[edges.values[e * ef + eType]!]!;
  return {
    nodeCount,
    type: (n) => nodeTypes[nodes.values[n * nf + nType]!]!,
    name: (n) => strings[nodes.values[n * nf + nName]!]!,
    selfSize: (n) => nodes.values[n * nf + nSize]!,
    firstEdge: (n) => first[n]!,
    edgeType,
    edgeName: (e) => {
      const v = edges.values[e * ef + eName]!;
      const t = edgeType(e);
      return t === 'element' || t === 'hidden' ? `[${v}]` : strings[v]!;
    },
    edgeTarget: (e) => edges.values[e * ef + eTo]! / nf,
  };
}

export interface Dominators {
  /** Each node's immediate dominator (the root's is itself); -1 for a node the root does not reach. */
  idom: Int32Array;
  /** Bytes freed if the node went: its own and everything only it holds. */
  retained: Float64Array;
}

/**
 * The dominator tree from node 0 (the snapshot's root) over every edge but weak ones (Cooper, Harvey and Kennedy's
 * iteration on reverse postorder), and the retained sizes it gives.
 */
export function dominators(g: HeapGraph): Dominators {
  const n = g.nodeCount;
  const strong = (e: number) => g.edgeType(e) !== 'weak';
  const post = new Int32Array(n).fill(-1); // node → postorder number
  const byPost = new Int32Array(n); // postorder number → node
  const seen = new Uint8Array(n);
  const stack = new Int32Array(n);
  const cursor = new Int32Array(n);
  let count = 0;
  let top = 0;
  stack[0] = 0;
  seen[0] = 1;
  cursor[0] = g.firstEdge(0);
  while (top >= 0) {
    const v = stack[top]!;
    const e = cursor[top]!;
    if (e < g.firstEdge(v + 1)) {
      cursor[top] = e + 1;
      const w = g.edgeTarget(e);
      if (strong(e) && !seen[w]) {
        seen[w] = 1;
        stack[++top] = w;
        cursor[top] = g.firstEdge(w);
      }
      continue;
    }
    post[v] = count;
    byPost[count++] = v;
    top--;
  }
  // Predecessors of each reached node, by postorder number.
  const predFirst = new Int32Array(count + 1);
  for (let v = 0; v < n; v++) {
    if (post[v]! < 0) continue;
    for (let e = g.firstEdge(v); e < g.firstEdge(v + 1); e++) if (strong(e)) predFirst[post[g.edgeTarget(e)]! + 1]!++;
  }
  for (let i = 0; i < count; i++) predFirst[i + 1] = predFirst[i + 1]! + predFirst[i]!;
  const preds = new Int32Array(predFirst[count]!);
  const fill = predFirst.slice(0, count);
  for (let v = 0; v < n; v++) {
    if (post[v]! < 0) continue;
    for (let e = g.firstEdge(v); e < g.firstEdge(v + 1); e++)
      if (strong(e)) preds[fill[post[g.edgeTarget(e)]!]!++] = post[v]!;
  }
  const dom = new Int32Array(count).fill(-1);
  const root = count - 1;
  dom[root] = root;
  const intersect = (a: number, b: number) => {
    while (a !== b) {
      while (a < b) a = dom[a]!;
      while (b < a) b = dom[b]!;
    }
    return a;
  };
  for (let changed = true; changed; ) {
    changed = false;
    for (let b = root - 1; b >= 0; b--) {
      let d = -1;
      for (let p = predFirst[b]!; p < predFirst[b + 1]!; p++) {
        const q = preds[p]!;
        if (dom[q] === -1) continue;
        d = d === -1 ? q : intersect(q, d);
      }
      if (d !== dom[b]) {
        dom[b] = d;
        changed = true;
      }
    }
  }
  const retainedPost = new Float64Array(count);
  for (let i = 0; i < count; i++) retainedPost[i] = g.selfSize(byPost[i]!);
  for (let i = 0; i < root; i++) retainedPost[dom[i]!]! += retainedPost[i]!;
  const idom = new Int32Array(n).fill(-1);
  const retained = new Float64Array(n);
  for (let i = 0; i < count; i++) {
    idom[byPost[i]!] = byPost[dom[i]!]!;
    retained[byPost[i]!] = retainedPost[i]!;
  }
  return { idom, retained };
}

/** What DevTools' Summary groups a node under: an object's constructor, or its kind in parentheses. */
function constructorOf(g: HeapGraph, node: number): string {
  const type = g.type(node);
  if (type === 'object' || type === 'native' || type === 'synthetic') return g.name(node);
  if (type.endsWith('string')) return '(string)';
  if (type === 'hidden' || type === 'object shape') return '(system)';
  if (type === 'code') return '(compiled code)';
  return `(${type})`;
}

export interface HeapSummary {
  totalBytes: number;
  nodes: number;
  byConstructor: { constructor: string; count: number; shallowBytes: number }[];
  /** The largest holders, each with the last edges of a shortest path from the root that holds it. */
  holders: { path: string; node: string; retainedBytes: number }[];
}

/**
 * For each node the edge that reaches it first in a breadth-first walk from the root over strong edges, and that
 * edge's source: a shortest path that holds it, as DevTools' Retainers shows first. The dominators alone say little
 * of an object held through several roots (its dominator is the root itself).
 */
function shortestRetainers(g: HeapGraph): { edge: Int32Array; from: Int32Array } {
  const edge = new Int32Array(g.nodeCount).fill(-1);
  const from = new Int32Array(g.nodeCount).fill(-1);
  const queue = new Int32Array(g.nodeCount);
  let head = 0;
  let tail = 1;
  edge[0] = -2;
  while (head < tail) {
    const v = queue[head++]!;
    for (let e = g.firstEdge(v); e < g.firstEdge(v + 1); e++) {
      const w = g.edgeTarget(e);
      if (edge[w] !== -1 || g.edgeType(e) === 'weak') continue;
      edge[w] = e;
      from[w] = v;
      queue[tail++] = w;
    }
  }
  return { edge, from };
}

const label = (g: HeapGraph, node: number) => {
  const name = node === 0 ? '(root)' : constructorOf(g, node);
  return name.length > 60 ? `${name.slice(0, 57)}...` : name;
};

export function summarize(g: HeapGraph, { top = 25 } = {}): HeapSummary {
  const { idom, retained } = dominators(g);
  const groups = new Map<string, { count: number; shallowBytes: number }>();
  let totalBytes = 0;
  for (let node = 0; node < g.nodeCount; node++) {
    if (idom[node] === -1) continue;
    totalBytes += g.selfSize(node);
    const key = constructorOf(g, node);
    const group = groups.get(key) ?? { count: 0, shallowBytes: 0 };
    group.count++;
    group.shallowBytes += g.selfSize(node);
    groups.set(key, group);
  }
  // A holder is a node that holds more than any single node it dominates plus a tenth: a chain of wrappers (an
  // object, its Map, the Map's table) shows once, at its outermost link.
  const largestChild = new Float64Array(g.nodeCount);
  for (let node = 1; node < g.nodeCount; node++) {
    const d = idom[node]!;
    if (d >= 0 && d !== node) largestChild[d] = Math.max(largestChild[d]!, retained[node]!);
  }
  const candidates = [];
  for (let node = 1; node < g.nodeCount; node++)
    if (idom[node]! >= 0 && g.type(node) !== 'synthetic' && retained[node]! > largestChild[node]! * 1.1 + 65_536)
      candidates.push(node);
  candidates.sort((a, b) => retained[b]! - retained[a]!);
  const via = shortestRetainers(g);
  const holders = candidates.slice(0, top).map((node) => {
    const hops: string[] = [];
    for (let v = node; via.edge[v]! >= 0 && hops.length < 6; v = via.from[v]!)
      hops.unshift(`${label(g, via.from[v]!)}.${g.edgeName(via.edge[v]!)}`);
    return { path: hops.join(' › '), node: label(g, node), retainedBytes: retained[node]! };
  });
  return {
    totalBytes,
    nodes: g.nodeCount,
    byConstructor: [...groups]
      .map(([constructor, v]) => ({ constructor, ...v }))
      .sort((a, b) => b.shallowBytes - a.shallowBytes)
      .slice(0, top),
    holders,
  };
}

export const readHeapSnapshot = (file: string) => parseHeapSnapshot(readFileSync(file));

const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1);

export function summaryTables(title: string, s: HeapSummary): string {
  return [
    `### ${title}: ${mb(s.totalBytes)} MB in ${s.nodes} nodes`,
    '',
    '| held by (the end of a shortest path from the root) | holder | retained MB |',
    '|---|---|---:|',
    ...s.holders.map(
      (h) => `| ${h.path.replaceAll('|', '\\|')} | ${h.node.replaceAll('|', '\\|')} | ${mb(h.retainedBytes)} |`,
    ),
    '',
    '| constructor | objects | shallow MB |',
    '|---|---:|---:|',
    ...s.byConstructor.map((c) => `| ${c.constructor.replaceAll('|', '\\|')} | ${c.count} | ${mb(c.shallowBytes)} |`),
    '',
  ].join('\n');
}

if (require.main === module) {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    process.stderr.write('usage: node --import tsx bench/heap-snapshot.ts <file.heapsnapshot>...\n');
    process.exit(2);
  }
  for (const file of files) process.stdout.write(`${summaryTables(file, summarize(readHeapSnapshot(file)))}\n`);
}
