/**
 * Routes mode's cloud alias for node sync: a node's alias is what the cluster's tables route to its
 * instance: the node's routes (lib/routes/route-rules.ts `isNodesRoute`), a route naming only the
 * instance's primary interface (`primaryInterfaces`: instance -> interface, as the planner is given
 * it) matched to the instance first.
 */
import { containsCidr, formatCidr, tryParseCidr } from '../../cidr/cidr.ts';
import { instanceIdOf } from '../../nodes/node.ts';
import type { DualStackCloudAlias } from '../../nodesync/index.ts';
import type { RouteTable } from '../../routes/index.ts';
import { matchInterfaceTarget } from '../../routes/route-plan-phases.ts';
import { isNodesRoute } from '../../routes/route-rules.ts';

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
