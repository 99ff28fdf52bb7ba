import { keptOnceRead, sharedWhileInFlight } from './limit';

describe('keptOnceRead', () => {
  it('reads once while reads succeed, and again after a failure', async () => {
    let calls = 0;
    const answers = [Promise.reject(new Error('unreachable')), Promise.resolve('libvirt:a')];
    const identity = keptOnceRead(() => (calls++, answers.shift()!));
    await expect(identity()).rejects.toThrow('unreachable');
    await expect(identity()).resolves.toBe('libvirt:a');
    await expect(identity()).resolves.toBe('libvirt:a');
    expect(calls).toBe(2);
  });
});

describe('sharedWhileInFlight', () => {
  it('gives the callers that come while a read is in flight its answer, or its failure, and reads anew after', async () => {
    const reads: ((value: string) => void)[] = [];
    const failures: ((error: Error) => void)[] = [];
    const image = sharedWhileInFlight(
      () =>
        new Promise<string>((resolve, reject) => {
          reads.push(resolve);
          failures.push(reject);
        }),
    );
    const together = [image(), image(), image()];
    expect(reads).toHaveLength(1);
    reads[0]!('first');
    expect(await Promise.all(together)).toEqual(['first', 'first', 'first']);
    const failing = [image(), image()];
    expect(reads).toHaveLength(2);
    failures[1]!(new Error('pool gone'));
    for (const call of failing) await expect(call).rejects.toThrow('pool gone');
    const after = image();
    expect(reads).toHaveLength(3);
    reads[2]!('second');
    await expect(after).resolves.toBe('second');
  });
});
