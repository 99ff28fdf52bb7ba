import { z } from 'zod';

// Each workflow evaluates the bundle's modules in a module cache of its own, so zod's compiled fast paths (built with
// `new Function` at a schema's first parse) are compiled again for every workflow a worker loads and kept once per
// cached workflow, for the one or two parses a workflow task makes. Without them parsing is plain code. Imported
// first by the workflows' entry, before any schema is built (zod reads the setting when a schema is made).
z.config({ jitless: true });
