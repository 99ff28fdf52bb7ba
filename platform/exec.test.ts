import { createExec, ExecError } from './exec';

const failureOf = async (call: Promise<unknown>) => {
  try {
    await call;
  } catch (error) {
    if (error instanceof ExecError) return error;
    throw error;
  }
  throw new Error('the call did not fail');
};

describe('exec: programs started by a helper process', () => {
  const exec = createExec();

  it("starts the program from the helper, not from this process (whose fork would copy this heap's page tables)", async () => {
    const { stdout } = await exec('sh', ['-c', 'echo $PPID'], { timeoutMs: 10_000 });
    const parent = Number(stdout.trim());
    expect(parent).toBeGreaterThan(0);
    expect(parent).not.toBe(process.pid);
  });

  it('answers each of many programs at once with its own output', async () => {
    const outputs = await Promise.all(
      Array.from({ length: 20 }, (_, i) => exec('sh', ['-c', `echo ${i}; echo e${i} >&2`], { timeoutMs: 10_000 })),
    );
    expect(outputs).toEqual(Array.from({ length: 20 }, (_, i) => ({ stdout: `${i}\n`, stderr: `e${i}\n` })));
  });

  it('fails as execFile does: the exit code and both outputs, the errno of a missing program, a kill on timeout', async () => {
    const exited = await failureOf(exec('sh', ['-c', 'echo out; echo bad >&2; exit 3'], { timeoutMs: 10_000 }));
    expect(exited).toMatchObject({ code: 3, killed: false, stdout: 'out\n', stderr: 'bad\n' });
    expect(await failureOf(exec('steward-no-such-program', [], { timeoutMs: 10_000 }))).toMatchObject({
      code: 'ENOENT',
    });
    const slow = await failureOf(exec('sleep', ['10'], { timeoutMs: 200 }));
    expect(slow).toMatchObject({ killed: true, signal: 'SIGTERM' });
  });

  it('runs in the given directory', async () => {
    expect((await exec('pwd', [], { cwd: '/', timeoutMs: 10_000 })).stdout).toBe('/\n');
  });

  it('fails what was in flight when the helper dies, and starts a new helper for the next program', async () => {
    const first = (await exec('sh', ['-c', 'echo $PPID'], { timeoutMs: 10_000 })).stdout;
    // The program kills its parent: the helper.
    const lost = await failureOf(exec('sh', ['-c', 'kill -9 $PPID; sleep 1'], { timeoutMs: 10_000 }));
    expect(lost).toMatchObject({ code: 'EHELPER' });
    expect(lost.message).toMatch(/helper exited \(SIGKILL\)/);
    const next = (await exec('sh', ['-c', 'echo $PPID'], { timeoutMs: 10_000 })).stdout;
    expect(next).not.toBe(first);
  });
});
