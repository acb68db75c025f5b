/**
 * Node sync's ports as the use cases build them (reconcile, the webhook): the Kubernetes side, and
 * routes mode's cloud alias (a node's route in the cluster's tables). Prefixes mode's alias is
 * ./prefix-mode.ts.
 */
import { containsCidr, formatCidr, tryParseCidr } from '../cidr/cidr.ts';
import type { Config } from '../config.ts';
import { instanceIdOf } from '../nodes/node.ts';
import type { DualStackCloudAlias, DualStackKubeNodes } from '../nodesync/index.ts';
import type { RouteTable } from '../routes/index.ts';
import type { NodeSource } from './ports.ts';
import { matchInterfaceTarget } from '../routes/route-plan-phases.ts';
import { isNodesRoute } from '../routes/route-rules.ts';

/**
 * The Kubernetes port of node sync. In routes mode a node is not reachable until its routes exist,
 * so node sync's "NetworkUnavailable=false" is left to the worker, which sees the routes.
 */
export function nodeSyncKube(deps: { config: Pick<Config, 'mode'>; nodes: NodeSource }): DualStackKubeNodes {
  return {
    getNode: (name) => deps.nodes.getNode(name),
    updatePodCidr: async (n, cidrs) => {
      await deps.nodes.updatePodCidr(n, cidrs);
    },
    setNetworkUnavailable: async (name, unavailable) => {
      if (deps.config.mode === 'routes' && !unavailable) return;
      await deps.nodes.setNetworkUnavailable(name, unavailable);
    },
    warn: async (name, reason, message) => {
      await deps.nodes.warn(name, reason, message);
    },
  };
}

/**
 * Routes mode: a node's alias is what the cluster's tables route to its instance: the node's routes
 * (lib/routes/route-rules.ts `isNodesRoute`), a route naming only the instance's primary interface
 * (`primaryInterfaces`: instance -> interface, as the planner is given it) matched to the instance first.
 */
export function routeAlias(tables: RouteTable[], clusterCidrs: readonly string[], primaryInterfaces: ReadonlyMap<string, string> = new Map()): DualStackCloudAlias {
  const clusters = clusterCidrs.map((text) => tryParseCidr(text)).filter((c) => c !== null);
  return {
    alias: async (node) => {
      const instanceId = instanceIdOf(node);
      if (!instanceId) return [];
      const eni = primaryInterfaces.get(instanceId);
      const instanceOfInterface = new Map(eni === undefined ? [] : [[eni, instanceId]]);
      const found = new Map<number, string>();
      for (const table of tables) {
        for (const route of table.routes) {
          if (!isNodesRoute(matchInterfaceTarget(route, instanceOfInterface), instanceId)) continue;
          const cidr = tryParseCidr(route.destinationCidr);
          if (!cidr || !clusters.some((cluster) => containsCidr(cluster, cidr))) continue;
          if (!found.has(cidr.family)) found.set(cidr.family, formatCidr(cidr));
        }
      }
      return [...found.values()];
    },
    // The route itself is the worker's job (a sync-node message follows the allocation).
    addAlias: async () => undefined,
  };
}
