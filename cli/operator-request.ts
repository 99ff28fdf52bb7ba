import { setTimeout as sleep } from 'node:timers/promises';
import * as k8s from '@kubernetes/client-node';
import { describeRef, type ObjectRef } from '../model/naming';
import {
  objectPatch,
  readRequestResult,
  requestAnnotations,
  type RequestAnnotation,
  type RequestResult,
} from '../model/operator-request';
import { authenticatedUser } from './mass-deletion';

/**
 * An operator action through Kubernetes (the default path): the request is written on the object with the
 * operator's own kubeconfig, so the API server's RBAC answers whether they may ask (a 403 is said as such), and its
 * requester is the user the API server authenticates (Steward's admission policy refuses any other name). The
 * starter relays it to the object's workflow and writes the result on the object, which this waits for.
 */

const FIELD_MANAGER = 'steward-cli';
const POLL_MS = 250;
/** The starter relays a request within its debounce and one Update: a minute is ample unless none runs. */
export const ANSWER_TIMEOUT_MS = 60_000;

/** The API server's own words of a refusal (its Status message), else the error's. */
function apiMessage(error: unknown): string {
  const body = (error as { body?: unknown }).body;
  try {
    const status = (typeof body === 'string' ? JSON.parse(body) : body) as { message?: string } | undefined;
    if (status?.message) return status.message;
  } catch {
    // not a Status: the error's own message below
  }
  return error instanceof Error ? error.message : String(error);
}

function refusal(error: unknown, ref: ObjectRef, user: string): Error {
  const code = (error as { code?: number }).code;
  if (code === 403)
    return new Error(`Kubernetes refused ${user} the request on ${describeRef(ref)}: ${apiMessage(error)}`);
  if (code === 404) return new Error(`no ${describeRef(ref)} in the cluster: ${apiMessage(error)}`);
  return error instanceof Error ? error : new Error(String(error));
}

/** Writes the request on its object as the kubeconfig's user, and resolves the starter's answer. */
export async function requestThroughKubernetes(
  kubeConfig: k8s.KubeConfig,
  ref: ObjectRef,
  request: RequestAnnotation,
  timeoutMs = ANSWER_TIMEOUT_MS,
): Promise<RequestResult> {
  const user = await authenticatedUser(kubeConfig);
  if (!user) throw new Error('the API server does not say who the kubeconfig authenticates (SelfSubjectReview)');
  const objects = k8s.KubernetesObjectApi.makeApiClient(kubeConfig);
  const patch = objectPatch(ref, requestAnnotations(request, user)) as k8s.KubernetesObject;
  try {
    await objects.patch(patch, undefined, undefined, FIELD_MANAGER, undefined, k8s.PatchStrategy.MergePatch);
  } catch (error) {
    throw refusal(error, ref, user);
  }
  return answerOf(objects, ref, request.id, timeoutMs);
}

async function answerOf(objects: k8s.KubernetesObjectApi, ref: ObjectRef, id: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const current = await objects.read(objectPatch(ref, {})).catch((error: unknown) => {
      if ((error as { code?: number }).code === 404)
        throw new Error(`${describeRef(ref)} is gone: its workflow's history says whether the request was taken`);
      throw error;
    });
    const result = readRequestResult(current.metadata?.annotations, id);
    if (result) return result;
    if (Date.now() > deadline)
      throw new Error(
        `no answer to the request on ${describeRef(ref)} in ${timeoutMs / 1000} s: is Steward's starter running? ` +
          'The request stays on the object, and is relayed when one leads',
      );
    await sleep(POLL_MS);
  }
}
