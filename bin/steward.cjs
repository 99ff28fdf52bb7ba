#!/usr/bin/env node
// Runs the TypeScript sources directly (tsx), so `npm start` and `steward` need no build step.
require('tsx/cjs');
require('../cli/main.ts');
