import { reportingAvailability } from './availability';
import { cloudFailure } from './errors';
import type { CloudProvider } from './provider';

const unavailable = () =>
  cloudFailure('CloudUnavailable', 'libvirtd is down', { provider: 'libvirt', operation: 'create' });

/** A provider whose `create` and `findByPodUid` (the probe's call) do what the test says. */
function fakeProvider(behaviour: { create: () => Promise<unknown>; find: () => Promise<unknown> }) {
  let probes = 0;
  const provider = {
    name: 'libvirt',
    create: behaviour.create,
    findByPodUid: () => (probes++, behaviour.find()),
  } as unknown as CloudProvider;
  return { provider, probes: () => probes };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

describe('the cloud provider, telling whether the cloud answers', () => {
  it('a success is an answer', async () => {
    const seen: boolean[] = [];
    const fake = fakeProvider({
      create: () => Promise.resolve({ instanceId: 'i-1' }),
      find: () => Promise.resolve([]),
    });
    await reportingAvailability(fake.provider, (answered) => seen.push(answered)).provider.create({} as never);
    expect([fake.probes(), seen]).toEqual([0, [true]]);
  });

  it('CloudUnavailable from a call has the cloud probed once, however many calls fail at once; no answer is the cloud down', async () => {
    const seen: boolean[] = [];
    const fake = fakeProvider({
      create: () => Promise.reject(unavailable()),
      find: () => Promise.reject(unavailable()),
    });
    const { provider } = reportingAvailability(fake.provider, (answered) => seen.push(answered));
    await Promise.all([1, 2, 3].map(() => expect(provider.create({} as never)).rejects.toThrow('libvirtd is down')));
    await settle();
    expect([fake.probes(), seen]).toEqual([1, [false]]);
  });

  it('CloudUnavailable that the cloud itself gave (EC2 out of capacity) is an answer: the probe is answered', async () => {
    const seen: boolean[] = [];
    const fake = fakeProvider({ create: () => Promise.reject(unavailable()), find: () => Promise.resolve([]) });
    const { provider } = reportingAvailability(fake.provider, (answered) => seen.push(answered));
    await expect(provider.create({} as never)).rejects.toThrow();
    await settle();
    expect(seen).toEqual([true]);
  });

  it('another failure (refused credentials) is an answer, and probes nothing; a probe refused so is an answer too', async () => {
    const seen: boolean[] = [];
    const refused = cloudFailure('CloudUnauthorized', 'denied', { provider: 'aws', operation: 'create' });
    const fake = fakeProvider({ create: () => Promise.reject(refused), find: () => Promise.reject(refused) });
    const reporting = reportingAvailability(fake.provider, (answered) => seen.push(answered));
    await expect(reporting.provider.create({} as never)).rejects.toThrow('denied');
    await settle();
    expect([fake.probes(), seen]).toEqual([0, []]);
    await reporting.probe();
    expect([fake.probes(), seen]).toEqual([1, [true]]);
  });
});

describe('what does not prove the cloud answers', () => {
  it('its identity, read once and kept, and a recorded ID taken as it is, are no answer', async () => {
    const seen: boolean[] = [];
    let probes = 0;
    const provider = {
      name: 'libvirt',
      identity: () => Promise.resolve('libvirt:host'),
      resolveRecordedId: ({ instanceId }: { instanceId: string }) => Promise.resolve({ instanceId }),
      findByPodUid: () => (probes++, Promise.reject(unavailable())),
    } as unknown as CloudProvider;
    const reporting = reportingAvailability(provider, (answered) => seen.push(answered)).provider;
    await reporting.identity();
    await reporting.resolveRecordedId({ instanceId: 'i-1', podName: 'web' });
    expect([probes, seen]).toEqual([0, []]);
  });
});
