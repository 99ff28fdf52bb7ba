import { ApplicationFailure, setCurrentDetails, sleep, upsertSearchAttributes } from '@temporalio/workflow';
import { kubernetes, midonetCalls } from './activities';
import { LifecycleState } from '../model/search-attributes';
import { translateGlobals } from '../model/translation';
import { Reason } from '../model/vocabulary';

/**
 * Global setup (`global/midonet`): checks that the cluster router the deployer made is there (seed 001), then
 * writes the global Translations (tunnel zone, router, shared chains and rules), which the pusher pushes like any
 * other. A missing router is shown (current details, `LifecycleState=waitingForClusterRouter`) and re-checked,
 * because the deployer may create it later.
 */
export interface GlobalSetupInput {
  tenant?: string;
  /** How often a missing cluster router is looked for again. */
  recheckMs?: number;
}

export async function globalMidonet({ tenant, recheckMs = 30_000 }: GlobalSetupInput = {}): Promise<{
  translations: string[];
}> {
  const result = translateGlobals(tenant ? { tenant } : {});
  if (!result.ok) throw ApplicationFailure.nonRetryable(result.error.message, result.error.reason);
  const router = result.translations.flatMap((t) => t.resources).find((r) => r.kind === 'Router');
  if (!router)
    throw ApplicationFailure.nonRetryable('the global translation has no cluster router', Reason.MachineMisconfigured);
  const routerId = (JSON.parse(router.body) as { id: string }).id;
  let published = '';
  const show = (state: string, details: string) => {
    setCurrentDetails(details);
    if (state !== published) upsertSearchAttributes([{ key: LifecycleState, value: state }]);
    published = state;
  };
  for (;;) {
    const seen = await midonetCalls.midonetObserve.executeWithOptions(
      { summary: `look for the cluster router ${routerId}` },
      [{ resource: router }],
    );
    if (seen.exists) break;
    show(
      'waitingForClusterRouter',
      `**Waiting for the cluster router** \`${routerId}\`: the deployer creates it in MidoNet (seed 001); checking again every ${recheckMs / 1000}s.`,
    );
    await sleep(recheckMs, { summary: 'clusterRouterRecheck' });
  }
  const applied = await kubernetes.applyTranslations.executeWithOptions(
    { summary: `apply the ${result.translations.length} global Translations` },
    [{ owner: { kind: 'Global' }, translations: result.translations }],
  );
  show('done', `Cluster router \`${routerId}\` found; global Translations written: ${applied.applied.join(', ')}`);
  return { translations: applied.applied };
}
