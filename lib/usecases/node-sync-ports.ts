/**
 * Node sync's Kubernetes port as the use cases build it (reconcile, the webhook). The cloud alias
 * is the data plane's (lib/dataplane/routes/route-alias.ts, lib/dataplane/prefixes/prefix-node-sync.ts).
 */
import { conditionText } from '../dataplane/data-plane.ts';
import type { DataPlane } from '../dataplane/data-plane.ts';
import type { DualStackKubeNodes } from '../nodesync/index.ts';
import type { NodeSource } from './ports.ts';

/**
 * The Kubernetes port of node sync; conditions carry the plane's text. A plane whose node is not
 * reachable until its routes exist leaves node sync's "NetworkUnavailable=false" to the worker,
 * which sees the routes (`nodeSyncMarksReady`).
 */
export function nodeSyncKube(deps: { plane: Pick<DataPlane, 'nodeSyncMarksReady' | 'readiness'>; nodes: NodeSource }): DualStackKubeNodes {
  return {
    getNode: (name) => deps.nodes.getNode(name),
    updatePodCidr: async (n, cidrs) => {
      await deps.nodes.updatePodCidr(n, cidrs);
    },
    setNetworkUnavailable: async (name, unavailable) => {
      if (!deps.plane.nodeSyncMarksReady && !unavailable) return;
      await deps.nodes.setNetworkUnavailable(name, unavailable, conditionText(deps.plane, unavailable));
    },
    warn: async (name, reason, message) => {
      await deps.nodes.warn(name, reason, message);
    },
  };
}
