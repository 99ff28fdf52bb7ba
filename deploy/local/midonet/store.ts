// Holds the state and persists it: every change schedules a write of the whole state as JSON, a temp file
// renamed over the target (atomic on POSIX). flush() is what close() calls, so no change is lost on a clean stop.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { emptyState, TABLE_NAMES, type State } from './state';

const DEBOUNCE_MS = 20;

export class Store {
  state: State;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private dirty = false;

  /** Called when a background write fails; the next change tries again. */
  onWriteError: (err: unknown) => void = () => {};

  private constructor(
    private readonly file: string | undefined,
    state: State,
  ) {
    this.state = state;
  }

  /** Loads `file` when it exists. A file that cannot be read as emulator state is an error, never a silent wipe. */
  static async open(file?: string): Promise<Store> {
    if (!file) return new Store(undefined, emptyState());
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new Store(file, emptyState());
      throw err;
    }
    const parsed = JSON.parse(text) as Partial<State>;
    if (parsed.version !== 1)
      throw new Error(`${file}: not MidoNet emulator state (version ${String(parsed.version)})`);
    const state = { ...emptyState(), ...parsed } as State;
    for (const table of TABLE_NAMES) state[table] ??= {};
    return new Store(file, state);
  }

  reset(): void {
    this.state = emptyState();
    this.changed();
  }

  changed(): void {
    if (!this.file) return;
    this.dirty = true;
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.write().catch((err) => this.onWriteError(err));
    }, DEBOUNCE_MS);
  }

  async flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    await this.write();
  }

  private write(): Promise<void> {
    // Writes are chained so two never race on the temp file.
    const run = async (): Promise<void> => {
      if (!this.file || !this.dirty) return;
      this.dirty = false;
      const tmp = `${this.file}.${process.pid}.tmp`;
      await mkdir(dirname(this.file), { recursive: true });
      try {
        await writeFile(tmp, JSON.stringify(this.state));
        await rename(tmp, this.file);
      } catch (err) {
        this.dirty = true;
        throw err;
      }
    };
    this.writing = this.writing.then(run, run);
    return this.writing;
  }
}
