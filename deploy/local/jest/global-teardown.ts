import type { Stack } from '..';

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { stewardStack?: Stack }).stewardStack?.stop();
}
