import { isCloudFailure } from './errors';
import type { CloudProvider } from './provider';

const isUnavailable = (error: unknown) => isCloudFailure(error) && error.type === 'CloudUnavailable';

/** No pod has it: looking for its VMs is a real call to the cloud (`identity` is read once and kept) that finds none. */
const NO_POD = '00000000-0000-0000-0000-000000000000';

/**
 * The provider, telling `observe` whether the cloud answers; and `probe`, a harmless call that tells it too.
 * `CloudUnavailable` also names answers (EC2's InsufficientInstanceCapacity): a call failing with it only has the
 * cloud probed at once, and only that probe's answer, or its absence, counts. Any success is an answer.
 */
export function reportingAvailability(
  provider: CloudProvider,
  observe: (answered: boolean) => void,
): { provider: CloudProvider; probe: () => Promise<void> } {
  let probing = false;
  const probe = async () => {
    try {
      await provider.findByPodUid(NO_POD);
      observe(true);
    } catch (error) {
      observe(!isUnavailable(error));
    }
  };
  const check = () => {
    if (probing) return;
    probing = true;
    void probe().finally(() => (probing = false));
  };
  /** `answers`: its success proves the cloud answered (`identity` is read once and kept; a new ID is not looked up). */
  const reporting =
    <A extends unknown[], O>(call: (...args: A) => Promise<O>, answers = true) =>
    async (...args: A): Promise<O> => {
      try {
        const result = await call(...args);
        if (answers) observe(true);
        return result;
      } catch (error) {
        if (isUnavailable(error)) check();
        throw error;
      }
    };
  return {
    provider: {
      name: provider.name,
      create: reporting((input) => provider.create(input)),
      delete: reporting((input) => provider.delete(input)),
      get: reporting((input) => provider.get(input)),
      start: reporting((input) => provider.start(input)),
      list: reporting(() => provider.list()),
      powerStates: reporting(() => provider.powerStates()),
      listUpstream: reporting(() => provider.listUpstream()),
      findByPodUid: reporting((podUid) => provider.findByPodUid(podUid)),
      identity: reporting(() => provider.identity(), false),
      resolveRecordedId: reporting((input) => provider.resolveRecordedId(input), false),
    },
    probe,
  };
}
