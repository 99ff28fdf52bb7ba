import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Steward's version, package.json's: what `--version` prints and the default build ID starts with. */
export const stewardVersion = (): string =>
  (JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }).version;
