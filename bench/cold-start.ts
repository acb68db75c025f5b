/**
 * Cold start: each function bundled the way serverless-esbuild bundles it for Lambda (ESM, minified,
 * tree-shaken, the createRequire banner), its size, and the time a fresh Node process takes to import
 * it, as a ratio to a bare handler that imports only @aws-sdk/client-ec2. Ratios from one run.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { median, round } from './stats.ts';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..');
const BANNER = "import{createRequire}from'module';const require=createRequire(import.meta.url);";

export interface ColdStartEntry {
  bundleBytes: number;
  importMs: number;
  importRatioToBareEc2: number;
}

export async function benchColdStart(samples = 7): Promise<Record<string, ColdStartEntry> & { bareEc2: { bundleBytes: number; importMs: number } }> {
  const dir = await mkdtemp(join(tmpdir(), 'podroute-cold-'));
  try {
    const bare = join(dir, 'bare.ts');
    await writeFile(bare, "import { EC2Client } from '@aws-sdk/client-ec2';\nconst client = new EC2Client({});\nexport const handler = async () => client.config.serviceId;\n");
    const entries: Record<string, string> = {
      bareEc2: bare,
      reconcile: join(root, 'functions', 'reconcile.ts'),
      routeWorker: join(root, 'functions', 'route-worker.ts'),
      nodeWebhook: join(root, 'functions', 'node-webhook.ts'),
    };
    const sizes: Record<string, number> = {};
    const times: Record<string, number> = {};
    for (const [name, entry] of Object.entries(entries)) {
      const outfile = join(dir, `${name}.mjs`);
      await build({
        entryPoints: [entry],
        outfile,
        bundle: true,
        minify: true,
        format: 'esm',
        platform: 'node',
        target: 'node22',
        banner: { js: BANNER },
        nodePaths: [join(root, 'node_modules')],
        logLevel: 'silent',
      });
      sizes[name] = (await stat(outfile)).size;
    }
    // Interleave the samples so machine noise hits every bundle alike; take medians.
    const samplesBy: Record<string, number[]> = Object.fromEntries(Object.keys(entries).map((name) => [name, []]));
    for (let i = 0; i < samples; i++) {
      for (const name of Object.keys(entries)) samplesBy[name]?.push(await importMs(join(dir, `${name}.mjs`)));
    }
    for (const [name, list] of Object.entries(samplesBy)) times[name] = median(list);
    const bareMs = times.bareEc2 ?? 1;
    const result: Record<string, unknown> = { bareEc2: { bundleBytes: sizes.bareEc2, importMs: round(bareMs, 2) } };
    for (const name of ['reconcile', 'routeWorker', 'nodeWebhook']) {
      result[name] = { bundleBytes: sizes[name], importMs: round(times[name] ?? 0, 2), importRatioToBareEc2: round((times[name] ?? 0) / bareMs, 2) };
    }
    return result as Record<string, ColdStartEntry> & { bareEc2: { bundleBytes: number; importMs: number } };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function importMs(file: string): Promise<number> {
  const script = `const t=performance.now();await import(${JSON.stringify(`file://${file}`)});process.stdout.write(String(performance.now()-t));`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', AWS_REGION: 'us-east-1' },
  });
  return Number(stdout);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await benchColdStart()));
}
