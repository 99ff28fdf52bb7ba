// Lint rules. Workflows must stay deterministic, so they may not import Node built-ins or I/O libraries. Production
// code may not import the embedded development stack, which the container image leaves out.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
    files: ['workflows/**/*.ts'],
    ignores: ['workflows/**/*.test.ts'],
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
    files: ['workflows/**/*.ts', 'activities/**/*.ts', 'worker/**/*.ts', 'starter/**/*.ts'],
    ignores: ['**/*.test.ts', '**/testing/**'],
    rules: {
      // The typescript-eslint rule, so types may still come from the stack (erased at run time), and so it does not
      // replace the workflows' own no-restricted-imports. `steward up` and `demo` load the stack with a require in
      // starter/cli/dev-stack.ts, only when they run.
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
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
  },
);
