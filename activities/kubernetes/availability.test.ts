import * as k8s from '@kubernetes/client-node';
import { kubernetesFailure, toFailure } from './errors';
import { apiServerAnswered } from './availability';

describe('whether the API server answered a failed call', () => {
  const replied = (status: number) => toFailure(new k8s.ApiException(status, 'x', '{"message":"m"}', {}), 'read');

  it('answered: any status of its own, a 500 and a 404 alike, and every other failure type', () => {
    for (const status of [400, 404, 409, 422, 429, 500]) expect(apiServerAnswered(replied(status))).toBe(true);
    expect(apiServerAnswered(kubernetesFailure('KubernetesForbidden', 'no'))).toBe(true);
  });

  it('not answered: no status (refused, reset, timed out) or a proxy’s or starting server’s 502–504', () => {
    expect(apiServerAnswered(toFailure(new TypeError('fetch failed'), 'read'))).toBe(false);
    for (const status of [502, 503, 504]) expect(apiServerAnswered(replied(status))).toBe(false);
    expect(apiServerAnswered(new k8s.ApiException(503, 'x', '', {}))).toBe(false);
  });
});
