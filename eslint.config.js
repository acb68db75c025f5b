import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', '.serverless/', '.esbuild/', 'dist/', 'coverage/', 'bench/results*'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-properties': ['error', { object: 'Math', property: 'random', message: 'Inject randomness; the core is deterministic.' }],
    },
  },
  {
    files: ['lib/**/*.ts'],
    ignores: ['lib/aws/**', 'lib/kube/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        { group: ['@aws-sdk/*', '@smithy/*', '@kubernetes/client-node'], message: 'Only lib/aws and lib/kube adapters import SDKs.' },
      ] }],
    },
  },
  {
    // Use cases see ports (lib/usecases/ports.ts, port-errors.ts), never adapters. This entry replaces
    // the one above for these files, so it repeats the SDK ban.
    files: ['lib/usecases/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [
        { group: ['@aws-sdk/*', '@smithy/*', '@kubernetes/client-node'], message: 'Only lib/aws and lib/kube adapters import SDKs.' },
        { group: ['**/aws/*', '**/kube/*'], message: 'Use cases import ports (ports.ts, port-errors.ts), not the adapters in lib/aws or lib/kube.' },
      ] }],
    },
  },
  {
    files: ['test/**/*.ts', 'infra/**/*.ts', 'bench/**/*.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
);
