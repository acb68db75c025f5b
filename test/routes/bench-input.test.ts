import { describe, expect, it } from 'vitest';
import { buildBenchInput } from '../../bench/plan.ts';
import { containsCidr, formatCidr, parseCidr } from '../../lib/cidr/cidr.ts';
import { instanceIdOf, podCidrsOf } from '../../lib/nodes/node.ts';
import { planRoutes } from '../../lib/routes/index.ts';

// The benchmark is only meaningful if its input is what it claims to be; no timing is asserted here.
describe('bench/plan.ts input', () => {
  const input = buildBenchInput();

  it('has 5,000 dual-stack nodes with distinct canonical pod CIDRs inside the cluster CIDRs', () => {
    const clusters = input.clusterCidrs.map((c) => parseCidr(c));
    const all = input.nodes.flatMap((n) => podCidrsOf(n));
    expect(input.nodes).toHaveLength(5000);
    expect(all).toHaveLength(10_000);
    expect(new Set(all).size).toBe(10_000);
    for (const text of all) {
      const cidr = parseCidr(text);
      expect(formatCidr(cidr)).toBe(text);
      expect(clusters.some((c) => containsCidr(c, cidr))).toBe(true);
    }
    expect(new Set(input.nodes.map((n) => n.metadata.name)).size).toBe(5000);
  });

  it('has 10,000 routes over 3 tables, one per destination in each table', () => {
    expect(input.routeTables).toHaveLength(3);
    const keys = input.routeTables.flatMap((t) => t.routes.map((r) => `${t.routeTableId}|${r.destinationCidr}`));
    expect(keys).toHaveLength(10_000);
    expect(new Set(keys).size).toBe(10_000);
    expect(input.routeTables.every((t) => t.skippedRoutes === 0)).toBe(true);
  });

  it('mixes correct, moved, blackholed and ownerless routes', () => {
    const plan = planRoutes(input);
    expect(plan.warnings).toBeUndefined();
    expect(new Set(plan.replace.map((r) => r.reason))).toEqual(new Set(['moved', 'blackhole']));
    expect(new Set(plan.delete.map((d) => d.reason))).toEqual(new Set(['no-owner', 'blackhole']));
  });

  it('the plan accounts for every route, counted from the input itself', () => {
    // Each pod CIDR wants one route per table to its node's instance. Read the input, not the plan:
    // a route missing is a create, a wrong or blackholed one a replace, a route no node owns a delete.
    const ownerOf = new Map(input.nodes.flatMap((n) => podCidrsOf(n).map((cidr) => [cidr, instanceIdOf(n)] as const)));
    const count = { missing: 0, wrong: 0, done: 0, unowned: 0 };
    for (const table of input.routeTables) {
      const byDestination = new Map(table.routes.map((r) => [r.destinationCidr, r]));
      for (const [cidr, instanceId] of ownerOf) {
        const route = byDestination.get(cidr);
        if (route === undefined) count.missing++;
        else if (route.blackhole || route.instanceId !== instanceId) count.wrong++;
        else count.done++;
      }
      count.unowned += table.routes.filter((r) => !ownerOf.has(r.destinationCidr)).length;
    }
    expect(count.missing + count.wrong + count.done).toBe(10_000 * 3);
    expect(Object.values(count).every((n) => n > 0)).toBe(true);
    const plan = planRoutes(input);
    expect(plan.create).toHaveLength(count.missing);
    expect(plan.replace).toHaveLength(count.wrong);
    expect(plan.delete).toHaveLength(count.unowned);
  });
});
