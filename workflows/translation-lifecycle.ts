import type { PushedResource } from '../activities/midonet/push';
import { kubernetes, midonet } from './activities';
import { Interpreter, type PersistedMachine } from './interpreter';
import { continueAsNewDue, continueAsNewWith, handleLifecycleMessages, publishState, stateName } from './lifecycle';
import type { LifecycleStateView, Observation } from './messages';
import { type TranslationActionParams, type TranslationContext, type TranslationEvent, type TranslationProjection, type TranslationTimings, TRANSLATION_MACHINE_VERSION, translationMachine } from './machines/translation';
import { describeRef, type ObjectRef } from './naming';

/**
 * The pusher (seed 000) as a workflow: one per Translation, id `translation/<ns>/<name>`, driven by the watcher's
 * observations. The machine decides; this function only wires executors (activities) and Temporal features.
 */
export interface TranslationLifecycleInput {
  ref: ObjectRef;
  timings?: Partial<TranslationTimings>;
  /** Set on continue-as-new. */
  persisted?: PersistedMachine<TranslationContext>;
  /** The next incarnation's first observation, carried when the previous one finished. */
  observation?: Observation<TranslationProjection>;
}

type ActionParams<A extends keyof TranslationActionParams> = TranslationActionParams[A];

export async function translationLifecycle(input: TranslationLifecycleInput): Promise<void> {
  const interpreter = new Interpreter<TranslationContext, TranslationEvent>(
    translationMachine,
    input.persisted ? { persisted: input.persisted } : { input: { ref: input.ref, timings: input.timings } },
  );
  const view = (): LifecycleStateView => {
    const c = interpreter.context;
    return {
      ref: c.ref,
      ...(c.uid ? { uid: c.uid } : {}),
      state: stateName(interpreter.snapshot.value),
      resources: [...c.pushed.map(asView), ...c.orphaned.map((r) => ({ ...asView(r), state: 'orphaned' }))],
      ...(c.lastError ? { lastError: c.lastError } : {}),
      actions: c.actions,
    };
  };
  handleLifecycleMessages(interpreter, view);
  if (input.persisted) interpreter.send({ type: 'resumed' });
  if (input.observation) interpreter.send({ type: 'observed', observation: input.observation });

  const published: { state?: string } = {};
  const what = describeRef(input.ref);
  await interpreter.run(
    {
      push: async (p: ActionParams<'push'>) => ({
        type: 'pushed',
        ...(await midonet.pushTranslation.executeWithOptions({ summary: `push ${p.resources.length} MidoNet resources of ${what}` }, [p])),
      }),
      deleteBackend: async (p: ActionParams<'deleteBackend'>) => ({
        type: 'backendDeleted',
        ...(await midonet.deleteTranslation.executeWithOptions({ summary: `delete ${p.resources.length} MidoNet resources of ${what} in reverse order` }, [p])),
      }),
      releaseFinalizer: async (p: ActionParams<'releaseFinalizer'>) => {
        await kubernetes.releaseFinalizer(p);
        return { type: 'released' };
      },
      recordStatus: async (p: ActionParams<'recordStatus'>) => {
        const synced = p.state === 'synced';
        const condition = synced
          ? { status: 'True' as const, reason: 'Synced', message: p.eventMessage }
          : { status: 'False' as const, reason: p.error?.reason ?? 'Stuck', message: p.eventMessage };
        await kubernetes.recordTranslationStatus({
          ref: p.ref,
          generation: p.generation,
          childResources: p.resources.map(({ kind, id, state }) => ({ kind, id, state })),
          ready: condition,
          synced: condition,
          event: { type: synced ? 'Normal' : 'Warning', reason: p.eventReason, message: p.eventMessage },
        });
        return { type: 'statusRecorded' };
      },
    },
    {
      onSnapshot: () => publishState(view(), published),
      shouldStop: () => continueAsNewDue() && interpreter.snapshot.hasTag('continueAsNewSafe'),
    },
  );
  if (!interpreter.done) {
    return continueAsNewWith<typeof translationLifecycle>({ ref: input.ref, timings: input.timings, persisted: interpreter.persisted(TRANSLATION_MACHINE_VERSION) as PersistedMachine<TranslationContext> });
  }
  // Incarnations of one name run in order in this workflow id: the new one starts once the old one is finalized.
  const next = interpreter.context.nextIncarnation;
  if (next) return continueAsNewWith<typeof translationLifecycle>({ ref: input.ref, timings: input.timings, observation: next });
}

const asView = (r: PushedResource) => ({ kind: r.kind, id: r.id, state: r.state });
