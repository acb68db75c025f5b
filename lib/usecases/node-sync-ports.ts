/**
 * The ports node sync runs over, by mode, for every use case that runs node sync (reconcile for
 * the cluster, the node webhook for one node): the Kubernetes port and the cloud "alias" (routes
 * in the cluster's tables, or the prefix delegated to the node's primary ENI).
 */
import { containsCidr, formatCidr, tryParseCidr } from '../cidr/cidr.ts';
import type { Config } from '../config.ts';
import type { CidrSet } from '../ipam/index.ts';
import { instanceIdOf } from '../nodes/node.ts';
import type { Node } from '../nodes/node.ts';
import type { DualStackCloudAlias, DualStackKubeNodes } from '../nodesync/index.ts';
import type { RouteTable } from '../routes/index.ts';
import type { EniPrefixes, NodeSource } from './ports.ts';

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

/** The node-sync cloud alias for the configured mode: routes in `tables`, or the node's ENI prefixes. */
export function nodeSyncCloud(
  deps: { config: Pick<Config, 'mode' | 'clusterCidrs'>; cidrSets: CidrSet[]; prefixes?: EniPrefixes },
  tables: RouteTable[],
  node: Node,
): DualStackCloudAlias {
  return deps.config.mode === 'routes' ? routeAlias(tables, deps.config.clusterCidrs) : prefixAlias(deps, node);
}

/** Routes mode: a node's alias is what the cluster's tables route to its instance. */
export function routeAlias(tables: RouteTable[], clusterCidrs: readonly string[]): DualStackCloudAlias {
  const clusters = clusterCidrs.map((text) => tryParseCidr(text)).filter((c) => c !== null);
  return {
    alias: async (node) => {
      const instanceId = instanceIdOf(node);
      if (!instanceId) return [];
      const found = new Map<number, string>();
      for (const table of tables) {
        for (const route of table.routes) {
          if (route.instanceId !== instanceId || route.blackhole) continue;
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

/** Prefixes mode: a node's alias is the prefix delegated to its primary ENI. */
function prefixAlias(deps: { cidrSets: CidrSet[]; prefixes?: EniPrefixes }, node: Node): DualStackCloudAlias {
  const prefixes = deps.prefixes;
  const instanceId = instanceIdOf(node);
  return {
    alias: async () => {
      if (!prefixes || !instanceId) return [];
      const families = deps.cidrSets.map((set) => tryParseCidr(set.clusterCidr)?.family ?? 4);
      const found = await Promise.all(families.map((family) => prefixes.alias(instanceId, family)));
      return found.filter((cidr): cidr is string => cidr !== null);
    },
    addAlias: async (_node, cidrs) => {
      if (!prefixes) throw new Error('prefixes mode needs the ENI prefix adapter');
      if (!instanceId) throw new Error(`node ${node.metadata.name} has no EC2 instance id in spec.providerID yet`);
      for (const cidr of cidrs) await prefixes.addAlias(instanceId, cidr);
    },
  };
}
