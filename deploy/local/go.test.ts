import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inGoScratch } from './go';
import { cacheRoot } from './paths';

const name = `go-test-${process.pid}`;
const scratch = join(cacheRoot, 'go-scratch', name);

it("gives Go its caches in the scratch folder, keeps the build's GOFLAGS, and removes the folder after the build", async () => {
  const seen = await inGoScratch(name, { GOFLAGS: '-mod=readonly', CGO_ENABLED: '0' }, (env) => {
    mkdirSync(env.GOCACHE!, { recursive: true });
    return Promise.resolve(env);
  });
  expect(seen).toEqual({
    CGO_ENABLED: '0',
    GOCACHE: join(scratch, 'build'),
    GOMODCACHE: join(scratch, 'mod'),
    GOFLAGS: '-mod=readonly -modcacherw',
  });
  expect(existsSync(scratch)).toBe(false);
});

it('removes the scratch folder after a failed build, and one an interrupted build left before it starts', async () => {
  mkdirSync(join(scratch, 'build'), { recursive: true });
  writeFileSync(join(scratch, 'build', 'left'), 'from an interrupted build');
  await expect(
    inGoScratch(name, {}, (env) => {
      expect(existsSync(join(scratch, 'build', 'left'))).toBe(false);
      expect(env.GOFLAGS).toBe('-modcacherw');
      mkdirSync(env.GOCACHE!, { recursive: true });
      return Promise.reject(new Error('go build failed'));
    }),
  ).rejects.toThrow('go build failed');
  expect(existsSync(scratch)).toBe(false);
});
