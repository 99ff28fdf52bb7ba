// A Translation is checked whole before any of it is pushed (issue 10): a bad resource in the middle must not leave
// the ones before it in MidoNet with nothing to say why the rest is missing. Limits are explicit, so a Translation
// too large to push and record safely is refused with the reason rather than half-pushed.
import type { ApplicationFailure } from '@temporalio/common';
import { identify, resourceBytes, type BackendResource } from '../../model/translation/types';
import { checkResource, type InvalidResource } from './check';
import { midonetFailure } from './errors';

export const TRANSLATION_LIMITS = {
  /** Resources per Translation: their record in `status.childResources` (~150 B each) stays under 300 KiB. */
  resources: 2_000,
  /** Bytes of one resource's JSON body (midonet-kubernetes' largest, a DNAT rule, is under 600). */
  bodyBytes: 16 * 1024,
  /** Bytes of all resources: with the record, the object stays under etcd's 1.5 MiB request limit. */
  totalBytes: 1024 * 1024,
} as const;

/** How many problems a refusal lists: enough to fix them, little enough for a condition message. */
const LISTED = 5;

/** Every problem of `resources`, in order: the list's size, then each resource's kind, parent, body and identity. */
export function validateResources(resources: readonly BackendResource[]): InvalidResource[] {
  if (resources.length > TRANSLATION_LIMITS.resources) {
    return [
      {
        field: 'resources',
        message: `${resources.length} resources; at most ${TRANSLATION_LIMITS.resources} are accepted in one Translation`,
      },
    ];
  }
  const total = resourceBytes(resources);
  if (total > TRANSLATION_LIMITS.totalBytes) {
    return [
      {
        field: 'resources',
        message: `about ${total} bytes of resources; at most ${TRANSLATION_LIMITS.totalBytes} are accepted in one Translation`,
      },
    ];
  }
  const problems: InvalidResource[] = [];
  const firstIndexOf = new Map<string, number>();
  for (const [index, resource] of resources.entries()) {
    const at = { index, kind: resource.kind };
    const bytes = Buffer.byteLength(resource.body ?? '');
    if (bytes > TRANSLATION_LIMITS.bodyBytes) {
      problems.push({
        ...at,
        field: 'body',
        message: `${bytes} bytes; at most ${TRANSLATION_LIMITS.bodyBytes} are accepted`,
      });
      continue;
    }
    const checked = checkResource(resource);
    if (!checked.ok) {
      problems.push({ ...at, ...checked.problem });
      continue;
    }
    const { key, id } = identify(resource);
    const first = firstIndexOf.get(key);
    if (first === undefined) firstIndexOf.set(key, index);
    else
      problems.push({
        ...at,
        field: 'body.id',
        message: `${resource.kind} ${id} is listed twice (first at resources[${first}])`,
      });
  }
  return problems;
}

export const describeProblem = (p: InvalidResource) =>
  `${p.index === undefined ? '' : `resources[${p.index}] (${p.kind}) `}${p.field}: ${p.message}`;

/** The refusal: non-retryable (only a changed Translation can fix it), listing the first problems. */
export function invalidTranslation(owner: string, problems: InvalidResource[]): ApplicationFailure {
  const listed = problems.slice(0, LISTED).map(describeProblem);
  const more = problems.length > LISTED ? `; and ${problems.length - LISTED} more` : '';
  return midonetFailure(
    'InvalidTranslation',
    `${owner} is invalid, nothing of it was pushed: ${listed.join('; ')}${more}`,
    { problems: problems.slice(0, LISTED) },
  );
}
