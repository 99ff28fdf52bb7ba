// CommonJS jest with @swc/jest. @kubernetes/client-node and some of its dependencies are ESM-only,
// so every top-level package declaring "type": "module" is let through the transform.
const fs = require('node:fs');
const path = require('node:path');

function esmOnlyPackages(root = path.join(__dirname, 'node_modules')) {
  const names = [];
  const visit = (dir, scope = '') => {
    for (const entry of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
      if (entry.startsWith('.')) continue;
      if (!scope && entry.startsWith('@')) {
        visit(path.join(dir, entry), entry);
        continue;
      }
      try {
        const pkg = JSON.parse(fs.readFileSync(path.join(dir, entry, 'package.json'), 'utf8'));
        if (pkg.type === 'module') names.push(scope ? `${scope}/${entry}` : entry);
      } catch {
        // not a package
      }
    }
  };
  visit(root);
  return names;
}
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const transform = {
  '^.+\\.(t|j|mj)s$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
};
const transformIgnorePatterns = [`/node_modules/(?!(${esmOnlyPackages().map(escape).join('|')})/)`];
const common = {
  testEnvironment: 'node',
  transform,
  transformIgnorePatterns,
  testPathIgnorePatterns: ['/node_modules/', '/.steward/'],
};

/**
 * Three projects: `unit` needs nothing running (machines, translators, the in-process MidoNet emulator);
 * `stack` runs on one embedded stack (deploy/local) that jest starts once, only when a stack test is selected;
 * `own-stack` files start stacks of their own (failover, chaos, benchmarks, peer pods, migration, `steward up`).
 * `npm test` runs `unit` first, then `stack` and `own-stack` side by side (deploy/local/jest/lanes.ts).
 * @type {import('jest').Config}
 */
module.exports = {
  // Applies to every project (jest reads it only at the top level).
  testTimeout: 180_000,
  // One file at a time per jest run: a stack test needs the machine's two cores, shared only with the other lane.
  maxWorkers: 1,
  // A limit every worker exceeds: each test file runs in a fresh process (jest never runs in band with a limit set).
  // Native handles of the Temporal SDK then end with that process instead of keeping jest alive, and a worker or
  // starter a failed file could not stop never runs on into the next file.
  workerIdleMemoryLimit: '1MB',
  projects: [
    {
      ...common,
      displayName: 'unit',
      testMatch: ['<rootDir>/**/*.test.ts'],
      testPathIgnorePatterns: [...common.testPathIgnorePatterns, '[.-]stack\\.test\\.ts$'],
    },
    {
      ...common,
      displayName: 'stack',
      testMatch: ['<rootDir>/**/*.stack.test.ts'],
      globalSetup: '<rootDir>/deploy/local/jest/global-setup.ts',
      globalTeardown: '<rootDir>/deploy/local/jest/global-teardown.ts',
    },
    {
      ...common,
      displayName: 'own-stack',
      testMatch: ['<rootDir>/**/*.own-stack.test.ts'],
      globalSetup: '<rootDir>/deploy/local/jest/own-stack-setup.ts',
    },
  ],
};
