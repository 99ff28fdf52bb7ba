import type {
  ApplyTranslationsInput,
  ApplyTranslationsResult,
  ReferrerInput,
  WrittenTranslation,
} from './kubernetes-calls';
import type { LifecycleError } from './messages';
import { describeRef, type ObjectRef } from './naming';
import { dependencyOf, translateWithDependency } from './translation/dependency';
import type { TranslationNote } from './translation/errors';

/**
 * An object's apply, step by step: register it on its dependency (that write, or the read when it is there already,
 * answers the dependency), translate (pure), wait until the dependency's Translations are pushed, apply its own. The
 * same steps run inside one local activity (`applyObject`, one marker in the history) or, for histories recorded
 * before that, as one local activity each.
 */
export interface ApplyObjectInput {
  ref: ObjectRef;
  uid: string;
  projection: unknown;
  tenant?: string;
  previousDependency?: ObjectRef;
  /** What it waited for before this apply: the same wait again is not told in another Event. */
  waitingFor?: string;
}

export type ApplyObjectResult =
  | {
      outcome: 'wait';
      reason: string;
      /**
       * The dependency will tell it when that changes (it is registered there as a referrer, or it is the Service of
       * these Endpoints, which tells them by name): no need to look again on a timer.
       */
      notified?: boolean;
      /** The dependency it registered on while waiting. */
      dependency?: ObjectRef;
    }
  | {
      outcome: 'invalid';
      error: Omit<LifecycleError, 'at'>;
      /** The dependency it registered on before its translation failed (its back-reference goes when it does). */
      dependency?: ObjectRef;
    }
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
  translationsReady(input: {
    translations: { namespace: string; name: string }[];
  }): Promise<{ ready: boolean; notReady: string[] }>;
  applyTranslations(
    input: ApplyTranslationsInput,
  ): Promise<Pick<ApplyTranslationsResult, 'applied' | 'written' | 'stale' | 'terminating'>>;
  /** The dependency as the registration wrote or read it; not registered on one missing or being deleted. */
  addReferrer(input: ReferrerInput): Promise<{ found: boolean; deleting?: true; object?: unknown }>;
  removeReferrer(input: ReferrerInput): Promise<unknown>;
}

export async function applyObjectSteps(
  calls: ApplyObjectCalls,
  { ref, uid, projection, tenant, previousDependency }: ApplyObjectInput,
): Promise<ApplyObjectResult> {
  const dependency = dependencyOf(projection);
  let dependencyProjection: unknown;
  if (dependency) {
    // Registered before it translates or waits: the dependency tells its referrers once it is translated and pushed
    // (a Node annotated). The registration's write (or fresh read) is the read of the dependency, one request a sync.
    const registered = await calls.addReferrer({ dependency, referrer: ref });
    // midonet-kubernetes ignores Endpoints without their Service; the Service, once there, tells them by name.
    if (!registered.found || registered.deleting || !registered.object)
      return {
        outcome: 'wait',
        reason: `${describeRef(dependency)} does not exist (yet)`,
        ...(dependency.kind === 'Service' && !registered.found ? { notified: true } : {}),
      };
    dependencyProjection = { ...registered.object, kind: dependency.kind };
  }
  const translated = translateWithDependency(projection, dependencyProjection, tenant);
  const registeredOn = dependency ? { dependency } : {};
  if (translated.outcome === 'invalid') return { ...translated, ...registeredOn };
  const waiting = { notified: true, ...registeredOn };
  if (translated.outcome === 'wait') return { ...translated, ...waiting };
  if (translated.dependencyTranslations.length > 0) {
    const { ready, notReady } = await calls.translationsReady({ translations: translated.dependencyTranslations });
    // Not a notified wait: the dependency tells its referrers when it changes, and its Translations fall back from
    // Ready without a change of it (a change in MidoNet has them pushed again). Chaos seed 10: two Pods that looked
    // then waited for the drift check.
    if (!ready)
      return {
        outcome: 'wait',
        reason: `waiting for ${describeRef(dependency!)}'s Translations to be pushed: ${notReady.join(', ')}`,
        ...(dependency ? { dependency } : {}),
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
