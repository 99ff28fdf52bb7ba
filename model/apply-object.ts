import type {
  ApplyTranslationsInput,
  ApplyTranslationsResult,
  ReadObjectResult,
  ReferrerInput,
  WrittenTranslation,
} from './kubernetes-calls';
import type { LifecycleError } from './messages';
import { describeRef, type ObjectRef } from './naming';
import { dependencyOf, translateWithDependency } from './translation/dependency';
import type { TranslationNote } from './translation/errors';

/**
 * An object's apply, step by step: read its dependency, translate (pure), wait until the dependency's Translations are
 * pushed, apply its own, and register it on its dependency. The same steps run inside one local activity
 * (`applyObject`, one marker in the history) or, for histories recorded before that, as one local activity each.
 */
export interface ApplyObjectInput {
  ref: ObjectRef;
  uid: string;
  projection: unknown;
  tenant?: string;
  previousDependency?: ObjectRef;
}

export type ApplyObjectResult =
  | { outcome: 'wait'; reason: string }
  | { outcome: 'invalid'; error: Omit<LifecycleError, 'at'> }
  | {
      outcome: 'applied';
      applied: string[];
      /** The applied Translations with their UID and generation, for their push. */
      written: WrittenTranslation[];
      /** Its Translations no longer wanted, deleted: their resources are deleted and they are let go. */
      stale: WrittenTranslation[];
      /** Applied Translations still being finalized (a previous incarnation's): apply again once they are gone. */
      terminating: string[];
      dependency?: ObjectRef;
      notes: TranslationNote[];
    };

/** The calls the steps make: the Kubernetes activities themselves, or local activities that run them. */
export interface ApplyObjectCalls {
  readObject(input: { ref: ObjectRef }): Promise<ReadObjectResult>;
  translationsReady(input: {
    translations: { namespace: string; name: string }[];
  }): Promise<{ ready: boolean; notReady: string[] }>;
  applyTranslations(
    input: ApplyTranslationsInput,
  ): Promise<Pick<ApplyTranslationsResult, 'applied' | 'written' | 'stale' | 'terminating'>>;
  addReferrer(input: ReferrerInput): Promise<unknown>;
  removeReferrer(input: ReferrerInput): Promise<unknown>;
}

export async function applyObjectSteps(
  calls: ApplyObjectCalls,
  { ref, uid, projection, tenant, previousDependency }: ApplyObjectInput,
): Promise<ApplyObjectResult> {
  const dependency = dependencyOf(projection);
  let dependencyProjection: unknown;
  if (dependency) {
    const read = await calls.readObject({ ref: dependency });
    if (!read.found || read.deleting)
      return { outcome: 'wait', reason: `${describeRef(dependency)} does not exist (yet)` };
    dependencyProjection = { ...read.object, kind: dependency.kind };
  }
  const translated = translateWithDependency(projection, dependencyProjection, tenant);
  if (translated.outcome !== 'translated') return translated;
  if (translated.dependencyTranslations.length > 0) {
    const { ready, notReady } = await calls.translationsReady({ translations: translated.dependencyTranslations });
    if (!ready)
      return {
        outcome: 'wait',
        reason: `waiting for ${describeRef(dependency!)}'s Translations to be pushed: ${notReady.join(', ')}`,
      };
  }
  const { kind, metadata } = translated.projection;
  const owner = {
    kind,
    ...('namespace' in metadata ? { namespace: metadata.namespace } : {}),
    name: metadata.name,
    uid,
  };
  const { applied, written, stale, terminating } = await calls.applyTranslations({
    owner,
    translations: translated.translations,
  });
  if (dependency) await calls.addReferrer({ dependency, referrer: ref });
  if (previousDependency && previousDependency.name !== dependency?.name)
    await calls.removeReferrer({ dependency: previousDependency, referrer: ref });
  return {
    outcome: 'applied',
    applied,
    written,
    stale,
    terminating,
    ...(dependency ? { dependency } : {}),
    notes: translated.notes,
  };
}
