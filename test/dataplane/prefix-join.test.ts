/**
 * Prefixes mode's worker `sync-node` (lib/dataplane/prefixes/prefix-join.ts, prefix-assign.ts) over
 * the in-memory fakes, through the plane as the wiring builds it: an admitted node's leased blocks
 * are assigned to its primary interface, each checked against the lease table, and its condition
 * settled once it is stored.
 */
import { describe, expect, it } from 'vitest';
import { prefixesPlane } from '../../lib/dataplane/prefixes/prefixes-plane.ts';
import { createCidrSet } from '../../lib/ipam/index.ts';
import { memoryLogger } from '../../lib/log.ts';
import { syncNodeMessage } from '../../lib/messages/work-message.ts';
import type { Delivery } from '../../lib/usecases/delivery-outcome.ts';
import { NodeNotStoredError } from '../../lib/usecases/delivery-outcome.ts';
import { RouteTableView } from '../../lib/usecases/route-table-view.ts';
import { MessageRefusedError } from '../../lib/usecases/route-worker-claims.ts';
import type { RouteWorkerDeps } from '../../lib/usecases/route-worker-deps.ts';
import { MemoryEniPrefixes, MemoryNodeSource, MemoryRouteTables, MemorySubnets, TimedMemoryCidrStore } from '../fakes/index.ts';

const CLUSTER_CIDRS = ['10.0.0.0/16', '2600:1f18:1234:5600::/56'];
const RANGES = ['10.0.24.0/22', '2600:1f18:1234:5601:8000::/65'];

interface Case {
  /** The node is stored (as admitted unless `storedCidrs`), or not yet. */
  stored: boolean;
  storedCidrs?: 'other';
  ready?: boolean;
  /** The message carries what the admission took (default), or nothing (a stored node's). */
  admitted?: boolean;
  /** Which admitted prefixes the interface holds already. */
  onInterface?: 'v4' | 'both';
  /** The IPv4 block is leased to another node, or delegated to another interface. */
  v4?: 'leased-to-another' | 'on-another-interface';
  receiveCount?: number;
  /** The interface carries a prefix leased to node `holder`, stored on the same instance or departed (404). */
  shared?: 'stored' | 'departed';
}

async function run(c: Case) {
  const clock = () => Date.UTC(2026, 11, 1);
  const subnets = new MemorySubnets();
  const subnet = subnets.addSubnet({ cidrs: ['10.0.16.0/20', '2600:1f18:1234:5601::/64'] });
  const prefixes = new MemoryEniPrefixes(subnets);
  const sets = await Promise.all(RANGES.map((range) => createCidrSet({ clusterCidr: range, nodeMaskSize: range.includes(':') ? 80 : 28, store: new TimedMemoryCidrStore(clock), rangeKind: 'pod range' })));
  const [v4set, v6set] = sets;
  if (!v4set || !v6set) throw new Error('sets');
  const owner = c.v4 === 'leased-to-another' ? 'someone-else' : 'joiner';
  const podCidrs = [await v4set.allocateNext(owner), await v6set.allocateNext('joiner')];
  const [v4 = '', v6 = ''] = podCidrs;
  if (c.v4 === 'on-another-interface') prefixes.addInstance(subnet.subnetId, [v4]);
  const holderBlock = c.shared ? [await v4set.allocateNext('holder')] : [];
  const eni = prefixes.addInstance(subnet.subnetId, [...holderBlock, ...(c.onInterface === 'both' ? [v4, v6] : c.onInterface === 'v4' ? [v4] : [])]);
  const nodes = new MemoryNodeSource(clock);
  const registered = '2026-11-30T00:00:00Z';
  if (c.shared === 'stored') nodes.put({ metadata: { name: 'holder', creationTimestamp: registered }, spec: { providerID: `aws:///us-east-1a/${eni.instanceId}`, podCIDR: holderBlock[0], podCIDRs: holderBlock } });
  const storedCidrs = c.storedCidrs === 'other' ? ['10.0.24.32/28', v6] : podCidrs;
  if (c.stored) nodes.add('joiner', { instanceId: eni.instanceId, podCidrs: storedCidrs, networkUnavailable: c.ready ? 'False' : 'True' });
  const log = memoryLogger();
  const plane = prefixesPlane({
    config: { clusterCidrs: CLUSTER_CIDRS, nodeSyncMode: 'SyncFromCluster' },
    prefixes,
    subnets,
    reservationSets: async (range) => sets[RANGES.indexOf(range)] ?? Promise.reject(new Error(range)),
    usedReservationSets: async () => sets,
    nodes,
    log,
  });
  const routeTables = new MemoryRouteTables({ clusterName: 'alpha' });
  const deps: RouteWorkerDeps = { clusterCidrs: CLUSTER_CIDRS, routeTables, routeTargets: routeTables, nodes, log, now: clock, cidrSets: [], leaseGraceSeconds: 300, plane };
  const message = syncNodeMessage('joiner', c.admitted === false ? undefined : { instanceId: eni.instanceId, podCidrs });
  const delivery: Delivery = { receiveCount: c.receiveCount ?? 1, maxReceiveCount: 5 };
  prefixes.calls.length = 0;
  const outcome = await plane.workerSyncNode(message, { ...deps, view: new RouteTableView(routeTables) }, delivery).then(
    (status) => status,
    (error: unknown) => (error instanceof NodeNotStoredError ? 'throws:not-stored' : error instanceof MessageRefusedError ? `throws:refused:${error.reason}` : `throws:${String(error)}`),
  );
  const held = (await prefixes.describeInterfaces([eni.instanceId])).get(eni.instanceId)?.prefixes ?? [];
  const assigned = prefixes.calls.filter((call) => call.startsWith('assignPrefix')).map((call) => call.split(' ')[2]);
  return { outcome, assigned, held, v4, v6, condition: nodes.networkUnavailable('joiner') };
}

describe("prefixes mode: the worker's sync-node", () => {
  it.each<[string, Case, string, Array<'v4' | 'v6'>, string | null]>([
    // name, case, outcome, prefixes assigned, condition after
    ['admitted, not stored yet: assigned at once, the condition waits (retried)', { stored: false }, 'throws:not-stored', ['v4', 'v6'], null],
    ['admitted, still not stored at a later receive: gone, nothing assigned', { stored: false, receiveCount: 2 }, 'throws:not-stored', [], null],
    ['admitted and stored: both assigned, then ready', { stored: true }, 'assigned,ready', ['v4', 'v6'], 'False'],
    ['admitted, one already on the interface (an earlier delivery): only the other assigned', { stored: true, onInterface: 'v4' }, 'assigned,ready', ['v6'], 'False'],
    ['admitted, both on the interface: nothing assigned, ready', { stored: true, onInterface: 'both' }, 'ready', [], 'False'],
    ['already ready: nothing read or written', { stored: true, ready: true }, 'in-sync', [], 'False'],
    ['stored with other pod CIDRs than admitted: left to reconcile', { stored: true, storedCidrs: 'other' }, 'left-to-reconcile:stored-differs-from-admitted', [], 'True'],
    ['a block the lease table gives another node: refused, nothing assigned', { stored: true, v4: 'leased-to-another' }, 'throws:refused:not-leased', [], 'True'],
    ['a block EC2 holds on another interface: left to reconcile, which holds it for the cloud', { stored: true, v4: 'on-another-interface' }, 'left-to-reconcile:prefix-refused', ['v4'], 'True'],
    ['a stored node on the same instance holds a prefix on the interface: refused as routes mode refuses, nothing assigned', { stored: true, shared: 'stored' }, 'throws:refused:instance-of-another-node', [], 'True'],
    ['the same, not stored yet: refused, nothing assigned', { stored: false, shared: 'stored' }, 'throws:refused:instance-of-another-node', [], null],
    ['a prefix on the interface leased to a departed node (404): assigned, then ready', { stored: true, shared: 'departed' }, 'assigned,ready', ['v4', 'v6'], 'False'],
    ['a stored node’s message (no admitted facts) with prefixes missing: nothing assigned', { stored: true, admitted: false }, 'left-to-reconcile:prefixes-missing', [], 'True'],
  ])('%s', async (_name, c, outcome, assigned, condition) => {
    const result = await run(c);
    expect(result.outcome).toBe(outcome);
    expect(result.assigned).toEqual(assigned.map((family) => result[family]));
    expect(result.condition).toBe(condition);
    // Whatever was assigned is on the node's interface: no call that failed left a prefix behind elsewhere.
    if ((outcome === 'assigned,ready' || outcome === 'ready') && c.shared === undefined) expect([...result.held].sort()).toEqual([result.v4, result.v6].sort());
  });
});
