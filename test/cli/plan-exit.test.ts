/**
 * `--detailed-exitcode` on `podroute plan` (reconcile --dry-run shares planExitCode): 0 no changes,
 * 1 any error, 2 changes pending; without the flag a plan exits 0 and bad input 2, as before.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hasPendingChanges, planExitCode } from '../../lib/cli/plan-exit.ts';
import { main } from '../../lib/cli/main.ts';
import type { RoutePlan } from '../../lib/routes/index.ts';

const root = join(import.meta.dirname, '..', '..');
const example = (name: string) => join(root, 'examples', name);

const empty: RoutePlan = { create: [], replace: [], delete: [], nodes: [] };
const create = { routeTableId: 'rtb-1', destinationCidr: '10.244.1.0/24', node: 'a', instanceId: 'i-1' };
const readyNode = { node: 'a', networkUnavailable: false, patch: false } as const;

describe('hasPendingChanges and planExitCode', () => {
  it.each<[string, RoutePlan, boolean]>([
    ['an empty plan', empty, false],
    ['ready nodes only, nothing to patch', { ...empty, nodes: [readyNode] }, false],
    ['a node waiting for its route (no write of its own)', { ...empty, nodes: [{ node: 'a', networkUnavailable: 'pending', patch: false }] }, false],
    ['a route to create', { ...empty, create: [create] }, true],
    ['a route to replace', { ...empty, replace: [{ ...create, reason: 'blackhole' }] }, true],
    ['a route to delete', { ...empty, delete: [{ routeTableId: 'rtb-1', destinationCidr: '10.244.9.0/24', reason: 'no-owner', expect: { instanceId: 'i-9', blackhole: false } }] }, true],
    ['deletions the guard withholds', { ...empty, delete: [{ routeTableId: 'rtb-1', destinationCidr: '10.244.9.0/24', reason: 'no-owner', expect: { instanceId: 'i-9', blackhole: false } }], unsafe: 'too many' }, true],
    ['a node condition to write', { ...empty, nodes: [{ node: 'a', networkUnavailable: true, patch: true }] }, true],
  ])('%s: pending %s', (_name, plan, pending) => {
    expect(hasPendingChanges(plan)).toBe(pending);
    expect(planExitCode(plan, true)).toBe(pending ? 2 : 0);
    expect(planExitCode(plan, false)).toBe(0);
  });
});

let dir: string;
let convergedNodes: string;
let convergedTables: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'podroute-exit-'));
  convergedNodes = join(dir, 'nodes.json');
  convergedTables = join(dir, 'tables.json');
  await writeFile(convergedNodes, JSON.stringify({
    apiVersion: 'v1',
    kind: 'List',
    items: [{
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'ready', creationTimestamp: '2026-01-01T00:00:00Z' },
      spec: { providerID: 'aws:///us-east-1a/i-00000000000000001', podCIDR: '10.244.1.0/24', podCIDRs: ['10.244.1.0/24'] },
      status: { conditions: [{ type: 'NetworkUnavailable', status: 'False', reason: 'RouteCreated' }] },
    }],
  }));
  await writeFile(convergedTables, JSON.stringify({
    RouteTables: [{ RouteTableId: 'rtb-0a1b2c3d4e5f60001', Routes: [{ DestinationCidrBlock: '10.244.1.0/24', InstanceId: 'i-00000000000000001', Origin: 'CreateRoute', State: 'active' }], Tags: [] }],
  }));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const io = { stdout: (t: string) => void (stdout += t), stderr: (t: string) => void (stderr += t), readFile: (p: string) => readFile(p, 'utf8'), env: {} };
  return { code: await main(args, io), stdout, stderr };
}

const examplePlan = ['plan', '--cluster-cidrs', '10.244.0.0/16', '--nodes', example('nodes.json'), '--route-tables', example('route-tables.json')];
const convergedPlan = () => ['plan', '--cluster-cidrs', '10.244.0.0/16', '--nodes', convergedNodes, '--route-tables', convergedTables];

describe('podroute plan --detailed-exitcode', () => {
  it.each<[string, () => string[], number, number]>([
    ['the examples (routes to create, replace, delete)', () => examplePlan, 0, 2],
    ['a converged cluster', convergedPlan, 0, 0],
    ['bad input (a missing file)', () => ['plan', '--cluster-cidrs', '10.244.0.0/16', '--nodes', join(dir, 'none.json'), '--route-tables', convergedTables], 2, 1],
    ['an unknown flag', () => [...convergedPlan(), '--nope'], 2, 1],
  ])('%s: exit %i without the flag, %i with it', async (_name, args, plain, detailed) => {
    const without = await cli(args());
    const withFlag = await cli([...args(), '--detailed-exitcode']);
    expect([without.code, withFlag.code]).toEqual([plain, detailed]);
    // The flag changes the status only: the same plan, or the same one-line error.
    expect(withFlag.stdout).toBe(without.stdout);
    expect(withFlag.stderr).toBe(without.stderr);
  });

  it('a converged cluster plans nothing', async () => {
    const { stdout } = await cli(convergedPlan());
    expect(JSON.parse(stdout)).toEqual({ create: [], replace: [], delete: [], nodes: [{ node: 'ready', networkUnavailable: false, patch: false }] });
  });

  it('is documented in plan --help', async () => {
    const { stdout } = await cli(['plan', '--help']);
    expect(stdout).toMatch(/--detailed-exitcode/);
    expect(stdout).toMatch(/0 the plan changes nothing,\s+1 an error \(bad input too\), 2 changes pending/);
  });
});
