import type { LifecycleError } from '../messages';
import type { ObjectRef } from '../naming';
import type { TranslationError, TranslationNote } from './errors';
import { translate } from './index';
import { type KubernetesProjection, type Translation } from './types';
import { toProjection } from './to-projection';

/**
 * The bridge between an object lifecycle and the pure translation: which object a projection depends on, and the
 * translation given that dependency, as one of three outcomes the machine understands.
 */
export type Translated =
  | {
      outcome: 'translated';
      projection: KubernetesProjection;
      translations: Translation[];
      notes: TranslationNote[];
      dependencyTranslations: { namespace: string; name: string }[];
    }
  | { outcome: 'wait'; reason: string }
  | { outcome: 'invalid'; error: Omit<LifecycleError, 'at'> };

/** A Pod depends on its Node (host binding, bridge); Endpoints on their Service (chains, ClusterIP). */
export function dependencyOf(projection: unknown): ObjectRef | undefined {
  const parsed = toProjection(projection);
  if (!parsed.ok) return undefined;
  const object = parsed.projection;
  if (object.kind === 'Pod' && object.spec.nodeName) return { kind: 'Node', name: object.spec.nodeName };
  if (object.kind === 'Endpoints')
    return { kind: 'Service', namespace: object.metadata.namespace, name: object.metadata.name };
  return undefined;
}

const describeError = (error: TranslationError): Omit<LifecycleError, 'at'> => ({
  reason: error.reason,
  message: `${error.object.kind} ${error.object.namespace ? `${error.object.namespace}/` : ''}${error.object.name}: field ${error.field}: ${error.message}`,
});

export function translateWithDependency(projection: unknown, dependencyObject?: unknown, tenant?: string): Translated {
  // Checked again here: a signal may also come from `temporal workflow signal`, not only from the watcher.
  const parsed = toProjection(projection);
  if (!parsed.ok) return { outcome: 'invalid', error: describeError(parsed.error) };
  let dependency: KubernetesProjection | undefined;
  if (dependencyObject !== undefined) {
    const dep = toProjection(dependencyObject);
    if (!dep.ok)
      return { outcome: 'wait', reason: `its dependency cannot be translated: ${describeError(dep.error).message}` };
    dependency = dep.projection;
  }
  const context = tenant ? { tenant } : {};
  const result = translate(parsed.projection, {
    ...context,
    ...(dependency?.kind === 'Node' ? { node: dependency } : {}),
    ...(dependency?.kind === 'Service' ? { service: dependency } : {}),
  });
  if (!result.ok) {
    // An error of the dependency (a Node not yet annotated) is its own workflow's to show: the referrer waits for it.
    const ofDependency = dependency && result.error.object.kind === dependency.kind;
    return result.error.reason === 'NodeNotFound' || ofDependency
      ? { outcome: 'wait', reason: describeError(result.error).message }
      : { outcome: 'invalid', error: describeError(result.error) };
  }
  const dependencyResult = dependency ? translate(dependency, context) : undefined;
  return {
    outcome: 'translated',
    projection: parsed.projection,
    translations: result.translations,
    notes: result.notes ?? [],
    // An invalid dependency shows its own error in its own workflow; the referrer just waits for it then.
    dependencyTranslations: dependencyResult?.ok
      ? dependencyResult.translations.map(({ namespace, name }) => ({ namespace, name }))
      : [],
  };
}
