import { describe, expect, it } from 'vitest';
import { buildBenchInput } from '../../bench/plan.ts';
import { containsCidr, formatCidr, parseCidr } from '../../lib/cidr/cidr.ts';
import { podCidrsOf } from '../../lib/nodes/node.ts';
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
    const wantedRoutes = 10_000 * 3;
    const done = wantedRoutes - plan.create.length - plan.replace.length;
    expect(done).toBeGreaterThan(0);
    expect(plan.create.length + plan.replace.length + done + plan.delete.length).toBe(wantedRoutes + plan.delete.length);
  });
});
