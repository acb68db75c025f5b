import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    // Builds the `podroute` command once for the tests that spawn it (test/support/cli-binary.ts).
    globalSetup: ['test/support/cli-build.global.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores on our machines and CI: forks keep native modules (dynalite's LevelDB) isolated.
    pool: 'forks',
    // One test file per core, and one more. Vitest's default leaves one core to its main process
    // (cores - 1: a single worker here), but the slow files mostly wait on child processes (osls,
    // the CLIs, `npm start`) and local servers, so a core sat idle while they waited. Measured on
    // 2 cores, one run each: 2 workers 161 s, 3 workers 140 s, 4 workers 137 s; no test uses a
    // fixed port, and the suite passes with 3 under two busy loops as well.
    maxWorkers: availableParallelism() + 1,
    // Files share their worker's module cache instead of each re-importing the AWS SDK, the
    // Kubernetes client and the emulators: 98 fresh imports were half of the suite's wall time
    // (196 s against 105 s here). Tests restore what they stub (client stubs after their file), and the
    // one file that mocks a module re-imports its subject under the mock and drops both after it
    // (test/webhook/timing-safe.test.ts).
    isolate: false,
    // And whatever a test forgets is put back after it: spies, stubbed env variables and globals.
    restoreMocks: true,
    unstubEnvs: true,
    unstubGlobals: true,
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
