import { keptOnceRead } from './limit';

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
