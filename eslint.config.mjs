// Lint rules. Workflows must stay deterministic, so they may not import Node built-ins or I/O libraries.
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
            { group: ['@kubernetes/client-node', '@temporalio/activity', '@temporalio/worker', '@temporalio/client'], message: 'Workflows do no I/O: call an activity.' },
          ],
          paths: ['fs', 'path', 'os', 'child_process', 'http', 'https', 'net', 'crypto'].map((name) => ({ name, message: 'Workflows are deterministic: no Node built-ins.' })),
        },
      ],
    },
  },
);
