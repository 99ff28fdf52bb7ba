// Reducing a failing operation log. Two steps: (1) always, without re-running: the operations that touched the
// objects named by the violations, with their dependencies (a Pod's Node, Endpoints' Service and back); (2) with
// --shrink: delta debugging (ddmin) over that list, each candidate re-run on a fresh stack with the same seed for
// the faults, keeping a candidate when it still violates the same invariant on the same object. Faults come on a
// timer, so a shorter list meets fewer of them: a candidate that passes may pass for that reason too.
import type { Violation } from './invariants';
import { NAMESPACE, targetOf, type Op } from './ops';

/** The operations on the objects the violations name, and on what those objects depend on, in order. */
export function relevantOps(ops: Op[], violations: Violation[]): Op[] {
  // A PeerPod is written for a peer pod, whose operations are on its Pod.
  const objects = new Set(violations.map((v) => v.object.replace(/^PeerPod /, 'Pod ')));
  for (const object of [...objects]) {
    const [kind, ref = ''] = object.split(' ');
    const name = ref.split('/').pop() ?? '';
    if (kind === 'Endpoints') objects.add(targetOf({ kind: 'Service', name }));
    if (kind === 'Service') objects.add(targetOf({ kind: 'Endpoints', name }));
    if (kind === 'Pod')
      for (const op of ops)
        if (op.target === object && op.spec?.kind === 'Pod' && op.spec.node)
          objects.add(targetOf({ kind: 'Node', name: op.spec.node }));
  }
  return ops.filter((op) => objects.has(op.target) || objects.has(op.target.replace(`${NAMESPACE}/`, '')));
}

/** Same failure: a violation of the same invariant about the same object. */
export const sameFailure = (wanted: Violation[]) => (got: Violation[]) =>
  got.some((g) => wanted.some((w) => w.invariant === g.invariant && w.object === g.object));

/**
 * ddmin (Zeller): the smallest list found, within `budget` runs, for which `fails` holds. `fails(ops)` runs the
 * operations and says whether the failure is still there.
 */
export async function ddmin(
  ops: Op[],
  fails: (ops: Op[]) => Promise<boolean>,
  budget: number,
  note: (line: string) => void = () => {},
): Promise<Op[]> {
  let current = ops;
  let n = 2;
  let runs = 0;
  while (current.length >= 2 && runs < budget) {
    const size = Math.ceil(current.length / n);
    const chunks = Array.from({ length: Math.ceil(current.length / size) }, (_, i) =>
      current.slice(i * size, (i + 1) * size),
    );
    let reduced = false;
    for (const [i, chunk] of chunks.entries()) {
      if (runs >= budget) break;
      const complement = chunks.flatMap((c, j) => (j === i ? [] : c));
      for (const candidate of chunks.length > 2 ? [chunk, complement] : [chunk]) {
        if (runs >= budget || candidate.length === 0) continue;
        runs++;
        const still = await fails(candidate);
        note(`shrink run ${runs}/${budget}: ${candidate.length} operations → ${still ? 'still fails' : 'passes'}`);
        if (still) {
          current = candidate;
          n = candidate === chunk ? 2 : Math.max(n - 1, 2);
          reduced = true;
          break;
        }
      }
      if (reduced) break;
    }
    if (!reduced) {
      if (n >= current.length) break;
      n = Math.min(current.length, n * 2);
    }
  }
  return current;
}
