import { z } from 'zod';

// zod's fast paths are compiled with `new Function` at a schema's first parse: per workflow for the schemas each one
// builds, for the one or two parses a workflow task makes. Without them parsing is plain code. Imported first by the
// workflows' entry, before any schema is built (zod reads the setting when a schema is made).
//
// The worker preloads this module (worker/bundle.ts), so this runs once, before the shared context is frozen, and
// zod's global config (a property of globalThis) is frozen with it. zod otherwise fills in its default locale and
// memoizer at the first schema it builds, which, in a workflow, would write into that frozen object: set them here.
z.config({ jitless: true, ...z.locales.en(), memoizer: z.memoizer() });
