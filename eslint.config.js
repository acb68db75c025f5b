import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const MODE_ONCE = 'The data-plane mode is chosen once, in functions/wiring.ts; take the DataPlane (lib/dataplane/data-plane.ts) instead.';
// The comparisons first: lib/nodesync takes only those two.
const modeOnce = [
  { selector: "BinaryExpression > Literal[value=/^(routes|prefixes)$/]", message: MODE_ONCE },
  { selector: "SwitchCase > Literal[value=/^(routes|prefixes)$/]", message: MODE_ONCE },
  { selector: "MemberExpression[property.name='mode'][object.property.name='config']", message: MODE_ONCE },
  { selector: "MemberExpression[property.name='mode'][object.name='config']", message: MODE_ONCE },
];

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
    // The data-plane mode is chosen once, in the wiring (docs/decisions/0001-data-plane-modes.md):
    // nothing else compares it or reads it. lib/nodesync's `mode` is node sync's (SyncFromCluster,
    // SyncFromCloud), so there only a comparison with 'routes' or 'prefixes' is refused. The doctor
    // runs outside the functions, so its plane is chosen once in lib/cli/doctor-wiring.ts.
    files: ['lib/**/*.ts', 'functions/**/*.ts', 'bin/**/*.ts'],
    ignores: ['lib/config.ts', 'functions/wiring.ts', 'lib/cli/doctor-wiring.ts', 'lib/dataplane/routes/**', 'lib/dataplane/prefixes/**', 'lib/nodesync/**'],
    rules: { 'no-restricted-syntax': ['error', ...modeOnce, { selector: "MemberExpression[property.name='mode']", message: MODE_ONCE }] },
  },
  {
    files: ['lib/nodesync/**/*.ts'],
    rules: { 'no-restricted-syntax': ['error', ...modeOnce.slice(0, 2)] },
  },
  {
    // Shape limits for the shipped code: a file holds one thing, a function does one step.
    files: ['lib/**/*.ts', 'functions/**/*.ts', 'bin/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 400 }],
      'max-lines-per-function': ['error', { max: 60 }],
    },
  },
  {
    files: ['test/**/*.ts', 'infra/**/*.ts', 'bench/**/*.ts'],
    rules: { 'no-restricted-properties': 'off' },
  },
);
