/** Stand-ins for node-left's tests: a Kubernetes node source (the live nodes, and how often they were listed), and a clock. */
import type { Node } from '../../lib/nodes/node.ts';
import { NodeNotFoundError } from '../../lib/usecases/port-errors.ts';

export const node = (name: string, podCIDR: string): Node => ({ metadata: { name }, spec: { podCIDR, providerID: 'aws:///z/i-0123456789abcdef0' } });

export function nodeSource(live: Node[]) {
  const calls = { list: 0 };
  return {
    calls,
    getNode: async (name: string): Promise<Node> => {
      const found = live.find((n) => n.metadata.name === name);
      if (!found) throw new NodeNotFoundError(name);
      return found;
    },
    listNodes: async (): Promise<Node[]> => {
      calls.list += 1;
      return live;
    },
  };
}

/**
 * The check's clock and grace period for stores that stamp leases at 0 or 1 (the claim protocol's
 * default clock, a fixed one): every lease is past the grace period, so a 404 may free it.
 */
export const PAST_GRACE = { now: () => 3_600_000, leaseGraceSeconds: 600 };
