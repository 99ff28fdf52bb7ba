import { failure, type TranslationFailure } from './errors';
import { projectionSchemas } from './projections';
import type { KubernetesProjection } from './types';

/**
 * Projects a Kubernetes object (or checks a received projection): the trimmed projection, or a
 * `MalformedObject` error naming the first field that does not fit. The object must carry its `kind`.
 */
export function toProjection(object: unknown): { ok: true; projection: KubernetesProjection } | TranslationFailure {
  const parsed = projectionSchemas().kubernetesProjection.safeParse(object);
  if (parsed.success) return { ok: true, projection: parsed.data };
  const issue = parsed.error.issues[0];
  const raw = (typeof object === 'object' && object !== null ? object : {}) as {
    kind?: unknown;
    metadata?: { name?: unknown; namespace?: unknown };
  };
  const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
  const kind = str(raw.kind);
  const namespace = str(raw.metadata?.namespace);
  return failure(
    {
      kind: kind === 'Node' || kind === 'Pod' || kind === 'Service' || kind === 'Endpoints' ? kind : 'Unknown',
      ...(namespace === undefined ? {} : { namespace }),
      name: str(raw.metadata?.name) ?? '',
    },
    'MalformedObject',
    fieldPath(issue?.path ?? []),
    issue?.message ?? 'not a Kubernetes object',
  );
}

/** `metadata.annotations["midonet.org/host-id"]`, `spec.ports[0].port`: the style of every error's field. */
function fieldPath(path: readonly PropertyKey[]): string {
  return path
    .map((key, i) => {
      if (typeof key === 'number') return `[${key}]`;
      const name = String(key);
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return `[${JSON.stringify(name)}]`;
      return i === 0 ? name : `.${name}`;
    })
    .join('');
}
