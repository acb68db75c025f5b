/**
 * The ports the use cases run over. The adapters in lib/aws and lib/kube implement them; tests and
 * the sandbox may pass anything of the same shape.
 */
import type { Node } from '../nodes/node.ts';
import type { Route, RouteTable } from '../routes/route-tables.ts';

export interface RouteSpec {
  routeTableId: string;
  destinationCidr: string;
  networkInterfaceId: string;
}

export interface RouteTables {
  /** The cluster's tables, all pages, in podroute's terms (lib/routes/route-tables.ts). */
  listRouteTables(): Promise<RouteTable[]>;
  createRoute(spec: RouteSpec): Promise<'created' | 'exists'>;
  replaceRoute(spec: RouteSpec): Promise<void>;
  deleteRoute(spec: { routeTableId: string; destinationCidr: string }): Promise<'deleted' | 'absent'>;
  /** A fresh read of one table's route to the destination (the static one when there is one), or null. */
  describeRoute(routeTableId: string, destinationCidr: string): Promise<Route | null>;
  /**
   * The instance's primary interface (device index 0), with that interface's source/destination
   * check turned off if it was on. Rejects with a ResourceNotFoundError (port-errors.ts) when the
   * cloud does not know the instance or interface (which may be launch lag: `mayBeLaunchLag`).
   */
  prepareRouteTarget(instanceId: string): Promise<{ instanceId: string; primaryEniId: string; sourceDestCheckChanged: boolean }>;
  /** Marks a table full (lib/routes/table-full.ts); optional for adapters that cannot tag. */
  markRouteTableFull?(routeTableId: string, mark: { routeCount: number; at: number }): Promise<void>;
  /** Removes the full mark. */
  clearRouteTableFull?(routeTableId: string): Promise<void>;
}

export type NodeWriteResult = 'patched' | 'unchanged' | 'gone';

export interface NodeSource {
  listNodes(): Promise<Node[]>;
  /** Rejects with NodeNotFoundError (port-errors.ts) when the node does not exist. */
  getNode(name: string): Promise<Node>;
  setNetworkUnavailable(nodeName: string, unavailable: boolean): Promise<NodeWriteResult>;
  updatePodCidr(node: Node, cidrs: string | readonly string[]): Promise<NodeWriteResult>;
  warn(nodeName: string, reason: string, message: string): Promise<unknown>;
}

/** The ENI-prefix cloud alias of prefix mode, per instance and family. */
export interface EniPrefixes {
  alias(instanceId: string, family: 4 | 6): Promise<string | null>;
  addAlias(instanceId: string, cidr: string): Promise<void>;
}
