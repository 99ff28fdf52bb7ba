#!/usr/bin/env node
// A checkout runs the TypeScript sources directly (tsx), so `npm start` and `steward` need no build step; the image
// holds them compiled (tsconfig.build.json), cli/main.js beside this file's folder, and no tsx.
const { existsSync } = require('node:fs');
const { join } = require('node:path');

if (existsSync(join(__dirname, '..', 'cli', 'main.js'))) {
  require('../cli/main.js');
} else {
  require('tsx/cjs');
  require('../cli/main.ts');
}
