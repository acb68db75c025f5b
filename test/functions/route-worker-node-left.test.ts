/**
 * The route-worker handler with node-left checks (message version 2) beside version-1 messages, as
 * a rolling upgrade mixes them: the CIDR sets come from the wiring, a gone node's leases are
 * released, a node still being deleted comes back (batchItemFailures), a node whose delete was
 * refused keeps everything, and a version-1 node-left is rejected without a retry.
 */
import { describe, expect, it } from 'vitest';
import { createRouteWorkerHandler } from '../../functions/route-worker.ts';
import type { Wiring } from '../../functions/wiring.ts';
import { loadConfig } from '../../lib/config.ts';
import { ClaimProtocolStore, MemoryClaimStore, createCidrSet } from '../../lib/ipam/index.ts';
import { NodeNotFoundError } from '../../lib/kube/kube-errors.ts';
import { memoryLogger } from '../../lib/log.ts';
import type { Node } from '../../lib/nodes/node.ts';
import type { NodeSource } from '../../lib/usecases/ports.ts';
import { lambdaContext, sqsEvent, sqsRecord } from '../support/world.ts';
import { routesWorkerPlane } from '../support/plane.ts';

const config = loadConfig({ CLUSTER_NAME: 'c', CLUSTER_CIDRS: '10.244.0.0/16' });

function nodes(stored: Record<string, Node>): NodeSource {
  return {
    listNodes: async () => Object.values(stored),
    getNode: async (name) => {
      const node = stored[name];
      if (!node) throw new NodeNotFoundError(name);
      return node;
    },
    setNetworkUnavailable: async () => 'unchanged',
    updatePodCidr: async () => 'unchanged',
    warn: async () => true,
  };
}

describe('route-worker handler: node-left checks', () => {
  it('releases only the gone node’s lease, retries the one being deleted, keeps the refused one, accepts v1 and rejects a v1 node-left', async () => {
    // Leases stamped at 0 (the claim protocol's default clock), checked an hour later: past the grace period.
    const set = await createCidrSet({ clusterCidr: '10.244.0.0/16', nodeMaskSize: 24, store: new ClaimProtocolStore(new MemoryClaimStore()) });
    await set.occupy('10.244.1.0/24', 'gone');
    await set.occupy('10.244.2.0/24', 'kept');
    await set.occupy('10.244.3.0/24', 'leaving');
    const log = memoryLogger();
    const wiring = {
      config,
      nodes: nodes({
        kept: { metadata: { name: 'kept' }, spec: { podCIDR: '10.244.2.0/24' } },
        leaving: { metadata: { name: 'leaving', deletionTimestamp: '2026-01-01T00:00:00Z', finalizers: ['example.com/hold'] }, spec: { podCIDR: '10.244.3.0/24' } },
      }),
      cidrSets: [set],
      plane: routesWorkerPlane([set]),
      queue: { send: async () => ({ sent: 0, duplicates: 0 }) },
      log,
      now: () => 3_600_000,
    } as unknown as Wiring;
    const handler = createRouteWorkerHandler(async () => wiring);
    const left = (node: string, v = 2) => JSON.stringify({ v, kind: 'node-left', node });

    const response = await handler(
      sqsEvent(
        sqsRecord('gone', left('gone')),
        sqsRecord('kept', left('kept')),
        sqsRecord('leaving', left('leaving')),
        sqsRecord('v1-sync', JSON.stringify({ v: 1, kind: 'sync-node', node: 'gone' }), 2),
        sqsRecord('v1-left', left('gone', 1)),
      ),
      lambdaContext(),
    );

    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'leaving' }] });
    expect((await set.leases()).map((l) => `${l.cidr}=${l.owner}`)).toEqual(['10.244.2.0/24=kept', '10.244.3.0/24=leaving']);
    const done = log.lines.filter((line) => line.event === 'message.done').map((line) => `${String(line.kind)}:${String(line.node)}:${String(line.status)}`);
    expect(done.sort()).toEqual(['node-left:gone:released:10.244.1.0/24', 'node-left:kept:stale:node-exists', 'sync-node:gone:stale:node-gone']);
    expect(log.lines.filter((line) => line.event === 'message.rejected')).toHaveLength(1);
  });
});
