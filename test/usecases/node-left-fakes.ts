/** A stand-in Kubernetes node source for node-left's tests: the live nodes, and how often they were listed. */
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
