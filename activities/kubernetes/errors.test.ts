import * as k8s from '@kubernetes/client-node';
import { toFailure } from './errors';

const status = (code: number, message: string) =>
  new k8s.ApiException(code, 'Unknown API Status Code!', JSON.stringify({ kind: 'Status', code, message }), {});

describe('toFailure', () => {
  const cases: { what: string; error: unknown; type: string; nonRetryable: boolean }[] = [
    {
      what: 'a 5xx is the API server being unavailable, retried',
      error: status(503, 'etcd leader changed'),
      type: 'KubernetesUnavailable',
      nonRetryable: false,
    },
    {
      what: 'a 429 is throttling, retried',
      error: status(429, 'too many requests'),
      type: 'KubernetesThrottled',
      nonRetryable: false,
    },
    {
      what: 'a 409 that reaches the caller is a conflict that resolves, retried',
      error: status(409, 'the object has been modified'),
      type: 'KubernetesConflict',
      nonRetryable: false,
    },
    {
      what: 'a 403 is RBAC, which no retry fixes',
      error: status(403, 'forbidden'),
      type: 'KubernetesForbidden',
      nonRetryable: true,
    },
    {
      what: 'a 422 is an invalid object, which no retry fixes',
      error: status(422, 'spec.x: Invalid value'),
      type: 'KubernetesInvalid',
      nonRetryable: true,
    },
    {
      what: 'a 400 is a bad request, which no retry fixes',
      error: status(400, 'bad'),
      type: 'KubernetesBadRequest',
      nonRetryable: true,
    },
    {
      what: 'a connection error (no HTTP status) is retried',
      error: new TypeError('fetch failed'),
      type: 'KubernetesUnavailable',
      nonRetryable: false,
    },
  ];
  it.each(cases)('$what', ({ error, type, nonRetryable }) => {
    expect(toFailure(error, 'read Pod default/p')).toMatchObject({ type, nonRetryable });
  });

  it("names the call and the object and carries the API server's own message, not the exception's dump", () => {
    expect(
      toFailure(status(403, 'pods "p" is forbidden: User "x" cannot get resource "pods"'), 'read Pod default/p')
        .message,
    ).toBe('read Pod default/p: API server answered 403: pods "p" is forbidden: User "x" cannot get resource "pods"');
  });
});
