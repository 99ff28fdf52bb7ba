// Jest lifecycle for the emulator suites, written once: one emulator per test file, closed after it, and (for most
// suites) a clean state, a fresh login and the suite's fixtures before each test. The client is ./conformance.
import { startHarness, type Harness } from './conformance';

/**
 * Starts one emulator for this test file and closes it after the file. The harness is returned before the emulator
 * starts (hooks run later) and filled in by beforeAll, so read its fields inside hooks and tests only.
 */
export function emulatorForFile(): Harness {
  const h = {} as Harness;
  beforeAll(async () => {
    Object.assign(h, await startHarness());
  });
  afterAll(() => h.emulator.close());
  return h;
}

/** emulatorForFile, and before each test: reset the emulator, log in again, then lay out `fixtures`. */
export function useEmulator(fixtures: (h: Harness) => Promise<void> = async () => {}): Harness {
  const h = emulatorForFile();
  beforeEach(async () => {
    await h.admin.reset();
    await h.api.login();
    await fixtures(h);
  });
  return h;
}
