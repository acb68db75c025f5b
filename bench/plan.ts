/**
 * Planner benchmark: 5,000 dual-stack nodes (10,000 pod CIDRs) against 10,000 existing routes in
 * three route tables, a mix of correct, moved, blackholed and ownerless routes. Times `planRoutes`
 * only (inputs are built and parsed beforehand): one warm-up, then the median of five runs.
 *
 *   node --import tsx bench/plan.ts     # prints one JSON line
 */
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { type Node, parseNode } from '../lib/nodes/node.ts';
import { type PlanInput, planRoutes } from '../lib/routes/index.ts';
import { parseRouteTables } from '../lib/routes/route-tables.ts';

export const BENCH_NODES = 5_000;
export const BENCH_ROUTES = 10_000;
export const BENCH_TABLES = 3;
const CLUSTER_CIDRS = ['10.0.0.0/8', 'fd00::/48'];

const instanceOf = (n: number): string => `i-${n.toString(16).padStart(17, '0')}`;
/** The i-th node's IPv4 /24 inside 10.0.0.0/8 (distinct for i < 65,536). */
const podV4 = (i: number): string => `10.${i >> 8}.${i & 255}.0/24`;
/** The i-th node's IPv6 /64 inside fd00::/48 (distinct for i < 32,768; ownerless ones use 0x8000 up). */
const podV6 = (i: number): string => (i === 0 ? 'fd00::/64' : `fd00:0:0:${i.toString(16)}::/64`); // RFC 5952 text

/** The planner input of the benchmark, validated through the real parsers. */
export function buildBenchInput(nodeCount = BENCH_NODES, routeCount = BENCH_ROUTES, tableCount = BENCH_TABLES): PlanInput {
  if (nodeCount > 0x8000 || routeCount > 2 * nodeCount || routeCount > 0x7f00) {
    throw new RangeError('bench sizes out of range for the generated CIDR layout');
  }
  const nodes: Node[] = [];
  for (let i = 0; i < nodeCount; i++) {
    nodes.push(
      parseNode({
        metadata: { name: `ip-10-${i >> 8}-${i & 255}-1.ec2.internal` },
        spec: { providerID: `aws:///us-east-1a/${instanceOf(i + 1)}`, podCIDR: podV4(i), podCIDRs: [podV4(i), podV6(i)] },
        status: { conditions: [{ type: 'NetworkUnavailable', status: i % 3 === 0 ? 'True' : 'False' }] },
      }),
    );
  }
  const raw = Array.from({ length: tableCount }, (_, t) => ({
    RouteTableId: `rtb-${t.toString(16).padStart(17, '0')}`,
    Tags: [{ Key: 'kubernetes.io/cluster/bench', Value: 'owned' }],
    Routes: [] as Array<Record<string, unknown>>,
  }));
  for (let k = 0; k < routeCount; k++) {
    const table = raw[k % tableCount];
    if (!table) continue;
    // Route k is about pod CIDR k: node k >> 1, IPv4 for even k, IPv6 for odd k.
    const nodeIndex = k >> 1;
    const v6 = (k & 1) === 1;
    const podCidr = v6 ? podV6(nodeIndex) : podV4(nodeIndex);
    const kind = k % 10;
    let destination = podCidr;
    let instance = instanceOf(nodeIndex + 1);
    let state = 'active';
    if (kind === 6) {
      instance = instanceOf(((nodeIndex + 1) % nodeCount) + 1); // moved: another node's instance
    } else if (kind === 7) {
      state = 'blackhole';
    } else if (kind >= 8) {
      destination = v6 ? podV6(0x8000 + k) : `10.${128 + (k >> 8)}.${k & 255}.0/24`; // no node owns it
      instance = instanceOf(0x100000 + k);
      if (kind === 9) state = 'blackhole';
    }
    table.Routes.push({
      [v6 ? 'DestinationIpv6CidrBlock' : 'DestinationCidrBlock']: destination,
      InstanceId: instance,
      NetworkInterfaceId: `eni-${instance.slice(2)}`,
      Origin: 'CreateRoute',
      State: state,
    });
  }
  return { nodes, routeTables: parseRouteTables({ RouteTables: raw }), clusterCidrs: CLUSTER_CIDRS, clusterName: 'bench' };
}

export async function benchPlan(): Promise<{ nodes: number; routes: number; tables: number; ms: number; msPerNode: number }> {
  const input = buildBenchInput();
  planRoutes(input); // warm-up
  const times: number[] = [];
  for (let run = 0; run < 5; run++) {
    const start = performance.now();
    planRoutes(input);
    times.push(performance.now() - start);
    await new Promise((resolve) => setImmediate(resolve));
  }
  times.sort((a, b) => a - b);
  const ms = times[Math.floor(times.length / 2)] ?? Number.NaN;
  const routes = input.routeTables.reduce((sum, table) => sum + table.routes.length, 0);
  return {
    nodes: input.nodes.length,
    routes,
    tables: input.routeTables.length,
    ms: Math.round(ms * 100) / 100,
    msPerNode: Math.round((ms / input.nodes.length) * 10_000) / 10_000,
  };
}

const entry = process.argv[1];
if (entry !== undefined && import.meta.url === pathToFileURL(entry).href) {
  console.log(JSON.stringify(await benchPlan()));
}
