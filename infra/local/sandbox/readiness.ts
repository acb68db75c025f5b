import type { KubeNodes } from '../../../lib/kube/kube-nodes.ts';
import type { NodeSource } from '../../../lib/usecases/ports.ts';

/**
 * When each node's NetworkUnavailable condition turned False, from the writes podroute makes:
 * the node source every handler uses is wrapped, and a `false` write that reached the node
 * marks it ready (the first one after its join); a `true` write that reached a node ready once
 * counts it as tainted (a node podroute took out of service after it was serving).
 */
export class Readiness {
  private readonly joinedAt = new Map<string, number>();
  private readonly readyAfter = new Map<string, number>();
  /** Nodes ready once that got NetworkUnavailable=True written afterwards. */
  private readonly taintedAfterReady = new Set<string>();

  joined(name: string): void {
    this.joinedAt.set(name, performance.now());
    this.readyAfter.delete(name);
    this.taintedAfterReady.delete(name);
  }

  /** Nodes that were ready once and were marked unavailable later by a write that reached them. */
  tainted(): number {
    return this.taintedAfterReady.size;
  }

  left(name: string): void {
    this.joinedAt.delete(name);
  }

  /** Milliseconds from join to ready, for every node that got there. */
  joinToReady(): number[] {
    return [...this.readyAfter.values()];
  }

  observe(inner: KubeNodes): NodeSource {
    return {
      listNodes: () => inner.listNodes(),
      getNode: (name) => inner.getNode(name),
      updatePodCidr: (node, cidrs) => inner.updatePodCidr(node, cidrs),
      warn: (nodeName, reason, message) => inner.warn(nodeName, reason, message),
      setNetworkUnavailable: async (nodeName, unavailable, text) => {
        const result = await inner.setNetworkUnavailable(nodeName, unavailable, text);
        if (unavailable && result === 'patched' && this.readyAfter.has(nodeName)) this.taintedAfterReady.add(nodeName);
        const joined = this.joinedAt.get(nodeName);
        if (!unavailable && result !== 'gone' && joined !== undefined && !this.readyAfter.has(nodeName)) {
          this.readyAfter.set(nodeName, Math.round(performance.now() - joined));
        }
        return result;
      },
    };
  }
}
