import { readOperatorRequest, readRequestResult, requestAnnotations, resultAnnotations } from './operator-request';
import { OPERATOR_REQUEST_ANNOTATION, OPERATOR_RESULT_ANNOTATION } from './vocabulary';

describe('an operator request written on its object', () => {
  const by = 'system:serviceaccount:ops:oncall';

  it('is the Update its action names, with the requester beside it, in the workflows own schema', () => {
    const annotations = requestAnnotations({ id: 'r-1', action: 'cleanup', reason: 'moving it', evenIfLive: true }, by);
    expect(readOperatorRequest(annotations)).toEqual({
      raw: annotations[OPERATOR_REQUEST_ANNOTATION],
      id: 'r-1',
      update: { action: 'cleanup', args: { reason: 'moving it', requestedBy: by, mode: 'retry', evenIfLive: true } },
    });
  });

  it('is none without the annotation', () => {
    expect(readOperatorRequest({ other: 'x' })).toBeUndefined();
    expect(readOperatorRequest(undefined)).toBeUndefined();
  });

  it.each<[string, Record<string, string>, string]>([
    ['not JSON', { [OPERATOR_REQUEST_ANNOTATION]: '{' }, 'steward.dev/request: not JSON'],
    [
      'an unknown action',
      { [OPERATOR_REQUEST_ANNOTATION]: '{"id":"r-2","action":"delete","reason":"r"}' },
      'steward.dev/request: action:',
    ],
    [
      'no requester',
      { [OPERATOR_REQUEST_ANNOTATION]: '{"id":"r-3","action":"pause","reason":"r"}' },
      'pause: requestedBy: requestedBy is required',
    ],
    ['a blank reason', requestAnnotations({ id: 'r-4', action: 'pause', reason: ' ' }, by), 'a reason is required'],
  ])('is refused with the field named when %s', (_why, annotations, message) => {
    const read = readOperatorRequest(annotations);
    expect(read && 'error' in read ? read.error : read).toContain(message);
  });

  it('has its result read by its own id only', () => {
    const written = resultAnnotations({ id: 'r-1', by, accepted: true, state: 'stuck', message: 'paused' });
    expect(written[OPERATOR_REQUEST_ANNOTATION]).toBeNull();
    const annotations = { [OPERATOR_RESULT_ANNOTATION]: written[OPERATOR_RESULT_ANNOTATION]! };
    expect(readRequestResult(annotations, 'r-1')).toMatchObject({ accepted: true, by });
    expect(readRequestResult(annotations, 'r-0')).toBeUndefined();
  });
});
