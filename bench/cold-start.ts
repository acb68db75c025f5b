/**
 * Cold start: each function bundled exactly as `osls package` bundles it (serverless-esbuild with
 * serverless.yml's `custom.esbuild`, read from the file, not copied), the JavaScript a fresh
 * container loads at start (the entry and the chunks it imports statically; chunks behind a dynamic
 * import load only when used), and the time a fresh Node process takes to import it, as a ratio to
 * a bare handler that imports only @aws-sdk/client-ec2, built with the same options and run with the
 * same NODE_OPTIONS as the functions (serverless.yml's provider environment). Ratios from one
 * run. Every run also records its figures under `steps`, keyed by the commit measured, so the effect
 * of each change stays on file.
 *
 * Each sample also reports the child's CPU time over the import (`process.cpuUsage`): on a loaded
 * machine the wall time mostly measures waiting for a core, the CPU time what the import costs.
 * `startBytesBy` says where each bundle's start-up JavaScript comes from (esbuild's metafile: the
 * package, or our top folder).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';
import { build, type BuildOptions, type Metafile } from 'esbuild';
import { load } from 'js-yaml';
import { median, round } from './stats.ts';

const run = promisify(execFile);
const root = join(import.meta.dirname, '..');

/**
 * Options of serverless-esbuild itself, which it removes before calling esbuild
 * (serverless-esbuild 1.57 `dist/bundle.js`, `bundle()`); every other key goes to esbuild as is.
 */
const PLUGIN_ONLY = [
  'concurrency', 'zipConcurrency', 'exclude', 'nativeZip', 'packager', 'packagePath', 'watch', 'keepOutputDirectory',
  'packagerOptions', 'installExtraArgs', 'outputFileExtension', 'outputBuildFolder', 'outputWorkFolder', 'nodeExternals',
  'skipBuild', 'skipRebuild', 'skipBuildExcludeFns', 'stripEntryResolveExtensions', 'disposeContext', 'config',
];

export interface ColdStartEntry {
  /** JavaScript loaded at start: the entry and every chunk it imports statically. */
  bundleBytes: number;
  /** JavaScript of chunks only a dynamic import loads (paid on the paths that use them). */
  lazyBytes: number;
  importMs: number;
  importRatioToBareEc2: number;
  /** Median CPU time (user + system) of the import, and its ratio to the bare handler's. */
  importCpuMs: number;
  cpuRatioToBareEc2: number;
  /** Bytes loaded at start by origin (a package, or lib/<area>, functions/), the largest first. */
  startBytesBy: Record<string, number>;
}

export interface ColdStartStep {
  commit: string;
  subject: string;
  bareEc2Ms: number;
  functions: Record<string, { bundleBytes: number; ratio: number; cpuRatio?: number }>;
}

export interface ColdStartResult {
  goal: string;
  /** The esbuild options used, as serverless.yml gives them (plus what serverless-esbuild adds). */
  esbuild: Record<string, unknown>;
  /** provider.environment.NODE_OPTIONS, which every import runs with. */
  nodeOptions: string;
  bareEc2: { bundleBytes: number; importMs: number; importCpuMs: number; startBytesBy: Record<string, number> };
  functions: Record<string, ColdStartEntry>;
  steps: ColdStartStep[];
}

/** serverless.yml's functions (name -> handler file) and its esbuild options as serverless-esbuild passes them. */
export async function deployedBuild(): Promise<{ handlers: Record<string, string>; options: BuildOptions; extension: string; nodeOptions: string }> {
  const doc = load(await readFile(join(root, 'serverless.yml'), 'utf8')) as {
    provider?: { environment?: { NODE_OPTIONS?: unknown } };
    custom?: { esbuild?: Record<string, unknown> };
    functions?: Record<string, { handler?: string }>;
  };
  const custom = doc.custom?.esbuild;
  if (!custom) throw new Error('serverless.yml has no custom.esbuild');
  if (custom.config !== undefined) throw new Error('custom.esbuild.config (a JS config file) is not read by this bench');
  const extension = typeof custom.outputFileExtension === 'string' ? custom.outputFileExtension : '.js';
  const exclude = Array.isArray(custom.exclude) ? custom.exclude.filter((x): x is string => typeof x === 'string') : ['aws-sdk'];
  const external = Array.isArray(custom.external) ? custom.external.filter((x): x is string => typeof x === 'string') : [];
  // serverless-esbuild's defaults under the file's options (`getBuildOptions`): bundle, platform node.
  const options: Record<string, unknown> = { bundle: true, platform: 'node' };
  for (const [key, value] of Object.entries(custom)) if (!PLUGIN_ONLY.includes(key)) options[key] = value;
  options.external = [...external, ...(exclude.includes('*') ? [] : exclude)];
  if (extension !== '.js') options.outExtension = { '.js': extension };
  const handlers: Record<string, string> = {};
  for (const [name, fn] of Object.entries(doc.functions ?? {})) {
    if (!fn.handler) continue;
    // `functions/reconcile.handler` -> functions/reconcile.ts (serverless-esbuild's DEFAULT_EXTENSIONS, .ts first)
    handlers[name] = `${fn.handler.slice(0, fn.handler.lastIndexOf('.'))}.ts`;
  }
  // The functions run with the provider's NODE_OPTIONS (--enable-source-maps reads each bundle's map).
  const nodeOptions = typeof doc.provider?.environment?.NODE_OPTIONS === 'string' ? doc.provider.environment.NODE_OPTIONS : '';
  return { handlers, options: options as BuildOptions, extension, nodeOptions };
}

/** Bytes of an output and every output it imports statically, and of the dynamic-only rest; the start bytes by origin. */
function loadedBytes(metafile: Metafile, entryOut: string): { atStart: number; lazy: number; by: Record<string, number> } {
  const start = new Set<string>();
  const visit = (file: string) => {
    if (start.has(file)) return;
    start.add(file);
    for (const imp of metafile.outputs[file]?.imports ?? []) if (imp.kind === 'import-statement' && !imp.external) visit(imp.path);
  };
  visit(entryOut);
  const lazy = new Set<string>();
  const visitLazy = (file: string) => {
    for (const imp of metafile.outputs[file]?.imports ?? []) {
      if (imp.external || start.has(imp.path) || lazy.has(imp.path)) continue;
      lazy.add(imp.path);
      visitLazy(imp.path);
    }
  };
  for (const file of start) visitLazy(file);
  const sum = (files: Set<string>) => [...files].reduce((total, file) => total + (file.endsWith('.map') ? 0 : (metafile.outputs[file]?.bytes ?? 0)), 0);
  const by = new Map<string, number>();
  for (const file of start) {
    for (const [input, { bytesInOutput }] of Object.entries(metafile.outputs[file]?.inputs ?? {})) {
      const origin = originOf(input);
      by.set(origin, (by.get(origin) ?? 0) + bytesInOutput);
    }
  }
  const largest = [...by].filter(([, bytes]) => bytes > 0).sort((a, b) => b[1] - a[1]).slice(0, 12);
  return { atStart: sum(start), lazy: sum(lazy), by: Object.fromEntries(largest) };
}

/** `node_modules/@scope/name/...` -> `@scope/name`; `lib/area/file.ts` -> `lib/area`; else the first folder. */
export function originOf(input: string): string {
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(input);
  if (pkg?.[1]) return pkg[1];
  const parts = input.split('/').filter((part) => part !== '..' && part !== '.');
  return parts[0] === 'lib' && parts.length > 2 ? `lib/${parts[1]}` : (parts[0] ?? input);
}

export async function benchColdStart(samples = 7, previous?: unknown): Promise<ColdStartResult> {
  const { handlers, options, extension, nodeOptions } = await deployedBuild();
  const measured = await commit();
  const dir = await mkdtemp(join(tmpdir(), 'podroute-cold-'));
  try {
    const bareSource = join(dir, 'bare', 'bare.ts');
    await run('mkdir', ['-p', dirname(bareSource)]);
    await writeFile(bareSource, "import { EC2Client } from '@aws-sdk/client-ec2';\nconst client = new EC2Client({});\nexport const handler = async () => client.config.serviceId;\n");
    const entries: Record<string, string> = { bareEc2: bareSource };
    for (const [name, handler] of Object.entries(handlers)) entries[name] = join(root, handler);
    const sizes: Record<string, { atStart: number; lazy: number; by: Record<string, number> }> = {};
    const files: Record<string, string> = {};
    for (const [name, entry] of Object.entries(entries)) {
      // As serverless-esbuild: one build per handler, into the build folder's copy of its directory.
      const outdir = name === 'bareEc2' ? join(dir, 'bare-out') : join(dir, 'build', dirname(relative(root, entry)));
      const result = await build({
        ...options,
        entryPoints: [entry],
        outdir,
        absWorkingDir: root,
        nodePaths: [join(root, 'node_modules')],
        metafile: true,
        write: true,
        logLevel: 'silent',
      });
      const base = entry.slice(entry.lastIndexOf('/') + 1).replace(/\.ts$/, extension);
      const out = Object.keys(result.metafile.outputs).find((file) => file.endsWith(`/${base}`) && result.metafile.outputs[file]?.entryPoint);
      if (!out) throw new Error(`no output for ${name}`);
      sizes[name] = loadedBytes(result.metafile, out);
      files[name] = join(root, out);
    }
    // Interleave the samples so machine noise hits every bundle alike; take medians.
    const samplesBy: Record<string, number[]> = Object.fromEntries(Object.keys(entries).map((name) => [name, []]));
    const cpuBy: Record<string, number[]> = Object.fromEntries(Object.keys(entries).map((name) => [name, []]));
    for (let i = 0; i < samples; i++) {
      for (const name of Object.keys(entries)) {
        const sample = await importMs(files[name] ?? '', nodeOptions);
        samplesBy[name]?.push(sample.wallMs);
        cpuBy[name]?.push(sample.cpuMs);
      }
    }
    const times: Record<string, number> = {};
    const cpu: Record<string, number> = {};
    for (const [name, list] of Object.entries(samplesBy)) times[name] = median(list);
    for (const [name, list] of Object.entries(cpuBy)) cpu[name] = median(list);
    const bareMs = times.bareEc2 ?? 1;
    const bareCpuMs = cpu.bareEc2 ?? 1;
    const functions: Record<string, ColdStartEntry> = {};
    for (const name of Object.keys(handlers)) {
      functions[name] = {
        bundleBytes: sizes[name]?.atStart ?? 0,
        lazyBytes: sizes[name]?.lazy ?? 0,
        importMs: round(times[name] ?? 0, 2),
        importRatioToBareEc2: round((times[name] ?? 0) / bareMs, 2),
        importCpuMs: round(cpu[name] ?? 0, 2),
        cpuRatioToBareEc2: round((cpu[name] ?? 0) / bareCpuMs, 2),
        startBytesBy: sizes[name]?.by ?? {},
      };
    }
    const step: ColdStartStep = {
      ...measured,
      bareEc2Ms: round(bareMs, 2),
      functions: Object.fromEntries(Object.entries(functions).map(([name, f]) => [name, { bundleBytes: f.bundleBytes, ratio: f.importRatioToBareEc2, cpuRatio: f.cpuRatioToBareEc2 }])),
    };
    const earlier = previousSteps(previous).filter((s) => s.commit !== step.commit);
    return {
      goal: 'each function loads at most 1.5 MB of JavaScript at start and imports in at most 1.3x a bare EC2 handler',
      esbuild: { ...options },
      nodeOptions,
      bareEc2: { bundleBytes: sizes.bareEc2?.atStart ?? 0, importMs: round(bareMs, 2), importCpuMs: round(bareCpuMs, 2), startBytesBy: sizes.bareEc2?.by ?? {} },
      functions,
      steps: [...earlier, step],
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function previousSteps(previous: unknown): ColdStartStep[] {
  if (typeof previous !== 'object' || previous === null || !('steps' in previous) || !Array.isArray(previous.steps)) return [];
  return previous.steps.filter((s): s is ColdStartStep => typeof s === 'object' && s !== null && typeof (s as { commit?: unknown }).commit === 'string');
}

/** The commit measured; `+dirty` when the work tree has uncommitted changes. */
async function commit(): Promise<{ commit: string; subject: string }> {
  const git = async (...args: string[]) => (await run('git', ['-C', root, ...args])).stdout.trim();
  const hash = await git('rev-parse', '--short', 'HEAD');
  // The bench's own outputs (bench/results.json, bench/convergence.svg) are rewritten while it runs:
  // they are not changes to what is measured.
  const dirty = (await git('status', '--porcelain', '--untracked-files=no', '--', '.', ':(exclude)bench/results.json', ':(exclude)bench/convergence.svg')) !== '';
  return { commit: dirty ? `${hash}+dirty` : hash, subject: await git('log', '-1', '--format=%s') };
}

/** One fresh process's import of `file`: wall time and CPU time (user + system), in ms. */
async function importMs(file: string, nodeOptions: string): Promise<{ wallMs: number; cpuMs: number }> {
  const script = `const c=process.cpuUsage();const t=performance.now();await import(${JSON.stringify(`file://${file}`)});const w=performance.now()-t;const u=process.cpuUsage(c);process.stdout.write(JSON.stringify([w,(u.user+u.system)/1000]));`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, NODE_OPTIONS: nodeOptions, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', AWS_REGION: 'us-east-1' },
  });
  const parsed: unknown = JSON.parse(stdout);
  if (!Array.isArray(parsed) || typeof parsed[0] !== 'number' || typeof parsed[1] !== 'number') throw new Error(`import of ${file} printed ${stdout.slice(0, 80)}`);
  return { wallMs: parsed[0], cpuMs: parsed[1] };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await benchColdStart()));
}
