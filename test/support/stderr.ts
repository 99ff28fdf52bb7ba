// What a piece of code writes to stderr (deprecation warnings, for instance), captured so a test can check it.

/** Runs `run` with process.stderr.write captured; what it returned and each write, in order. */
export async function withStderr<T>(run: () => T | Promise<T>): Promise<{ result: T; writes: string[] }> {
  const writes: string[] = [];
  const write = jest.spyOn(process.stderr, 'write').mockImplementation((s) => writes.push(String(s)) > 0);
  try {
    return { result: await run(), writes };
  } finally {
    write.mockRestore();
  }
}
