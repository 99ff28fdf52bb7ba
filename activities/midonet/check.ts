// What a resource must be before it is sent: a known kind, a parent where its kind lives under one, a body its
// kind's schema accepts. Pure and below the client and the error vocabulary, which both use it.
import { z } from 'zod';
import type { BackendKind, BackendResource } from '../../model/translation/types';
import { bodies, kinds, type KindPaths, type KindSpec } from './kinds';

export interface Resolved {
  kind: BackendKind;
  spec: KindSpec<BackendKind>;
  parent: string;
  raw: string;
  body: Record<string, unknown>;
  paths: KindPaths;
  /** The fields by which MidoNet's object for it names it (kinds.ts `names`, else its `id`). */
  names: Record<string, string>;
}

/** What is wrong with one resource: the field (`kind`, `parent`, `body`, `body.natTargets[0].addressFrom`) and why. */
export interface ResourceProblem {
  field: string;
  message: string;
}

/** A problem of a Translation's resources (validate.ts), where it is. */
export interface InvalidResource extends ResourceProblem {
  /** Position in the Translation's `resources`; absent for a problem of the whole list. */
  index?: number;
  kind?: string;
}

const isKind = (kind: string): kind is BackendKind => Object.hasOwn(kinds, kind);

/** The resource resolved against its kind's table, or the first problem that keeps it from being sent. */
export function checkResource(
  resource: BackendResource,
): { ok: true; resolved: Resolved } | { ok: false; problem: ResourceProblem } {
  const problem = (field: string, message: string) => ({ ok: false as const, problem: { field, message } });
  // Checked although typed: a Translation's resources arrive as JSON that the type cannot vouch for.
  const kind: string = resource.kind;
  if (!isKind(kind)) return problem('kind', `unknown kind "${kind}"; known kinds are ${Object.keys(kinds).join(', ')}`);
  // Widened to any kind: the body is checked against this same kind's schema below, which TypeScript cannot follow.
  const spec = kinds[kind] as KindSpec<BackendKind>;
  const parent = resource.parent ?? '';
  if (spec.parent !== (parent !== ''))
    return problem(
      'parent',
      spec.parent
        ? `a parent is required (a ${kind} lives under one)`
        : `this kind has no parent (a ${kind} is top-level)`,
    );
  if (parent && !z.guid().safeParse(parent).success) return problem('parent', `"${parent}" is not a UUID`);
  let json: unknown;
  try {
    json = JSON.parse(resource.body);
  } catch {
    return problem('body', `not JSON: ${resource.body.slice(0, 200)}`);
  }
  const body = bodies[kind].safeParse(json);
  if (!body.success) {
    const issue = body.error.issues[0]!;
    return problem(
      ['body', ...issue.path.map((key) => (typeof key === 'number' ? `[${key}]` : `.${String(key)}`))].join(''),
      issue.message,
    );
  }
  const { id } = body.data as { id?: unknown };
  const names = spec.names?.(parent, body.data) ?? (typeof id === 'string' ? { id } : {});
  return {
    ok: true,
    resolved: { kind, spec, parent, raw: resource.body, body: body.data, paths: spec.paths(parent, body.data), names },
  };
}
