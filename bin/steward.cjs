#!/usr/bin/env node
// A checkout runs the TypeScript sources directly (tsx), so `npm start` and `steward` need no build step; the image
// holds them compiled (tsconfig.build.json), cli/main.js beside this file's folder, and no tsx.
const { existsSync } = require('node:fs');
const { join } = require('node:path');

// Said before anything loads: on an older Node the failure would be some module's syntax error, not the reason.
const needed = require('../package.json').engines.node.replace(/^>=/, '');
const older = (a, b) => {
  const [x, y] = [a, b].map((v) => v.split('.').map(Number));
  const at = x.findIndex((n, i) => n !== y[i]);
  return at >= 0 && x[at] < y[at];
};
if (older(process.versions.node, needed)) {
  process.stderr.write(
    `error: Steward needs Node ${needed} or newer (package.json engines); this is ${process.version}\n`,
  );
  process.exit(1);
}

if (existsSync(join(__dirname, '..', 'cli', 'main.js'))) {
  require('../cli/main.js');
} else {
  require('tsx/cjs');
  require('../cli/main.ts');
}
