// Lint rules. Workflows must stay deterministic, so they may not import Node built-ins or I/O libraries. Production
// code may not import the embedded development stack, which the container image leaves out.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** What each room may import at run time. */
const rooms = {
  model: { mayImport: [], types: false },
  platform: { mayImport: ['model'], types: false },
  workflows: { mayImport: ['model'], types: true },
  activities: { mayImport: ['model', 'platform'], types: true },
  starter: { mayImport: ['model', 'platform'], types: true },
  worker: { mayImport: ['model', 'platform'], types: true },
  cli: { mayImport: ['model', 'platform', 'workflows', 'activities', 'starter', 'worker', 'deploy'], types: true },
};
const projectFolders = new Set([...Object.keys(rooms), 'deploy', 'test', 'bench']);

export default tseslint.config(
  { ignores: ['node_modules/', '.steward/', 'dist/', '**/*.cjs', '**/*.mjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    // model/ is bundled into the workflows too.
    files: ['workflows/**/*.ts', 'model/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['node:*'], message: 'Workflows are deterministic: no Node built-ins (use activities).' },
            {
              group: ['@kubernetes/client-node', '@temporalio/activity', '@temporalio/worker', '@temporalio/client'],
              message: 'Workflows do no I/O: call an activity.',
            },
          ],
          paths: ['fs', 'path', 'os', 'child_process', 'http', 'https', 'net', 'crypto'].map((name) => ({
            name,
            message: 'Workflows are deterministic: no Node built-ins.',
          })),
        },
      ],
    },
  },
  {
    // Functions a screen long (STYLE.md 17); machines are data, not functions, so they are not counted.
    files: Object.keys(rooms).map((room) => `${room}/**/*.ts`),
    ignores: ['**/*.test.ts', '**/testing/**'],
    rules: { 'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }] },
  },
  // Rooms on one floor (STYLE.md 16): model/ under everything, platform/ on model/, and workflows/, activities/,
  // starter/ and worker/ side by side on both, importing each other only as types; cli/ on top composes them. The
  // embedded development stack (deploy/local) is not in the image: `steward up` and `demo` load it with a require in
  // cli/dev-stack.ts, only when they run. typescript-eslint's rule, so that `allowTypeImports` lets types through
  // (erased at run time) and it does not replace the workflows' own no-restricted-imports.
  ...Object.entries(rooms).map(([room, { mayImport, types }]) => ({
    files: [`${room}/**/*.ts`],
    ignores: ['**/*.test.ts', '**/testing/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: `^(\\.\\./)+(${[...projectFolders].filter((f) => f !== room && !mayImport.includes(f)).join('|')})(/|$)`,
              allowTypeImports: types,
              message: `${room}/ may import ${mayImport.length ? mayImport.join(', ') : 'nothing of the project'}${types ? ' (other rooms as types only)' : ''}: see eslint.config.mjs.`,
            },
            {
              group: ['**/deploy/local', '**/deploy/local/**'],
              allowTypeImports: true,
              message:
                'The embedded development stack is not in the image: move what production needs out of deploy/local.',
            },
          ],
        },
      ],
    },
  })),
);
