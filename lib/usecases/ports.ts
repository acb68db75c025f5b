/**
 * The ports the use cases run over. The adapters in lib/aws and lib/kube implement them; tests and
 * the sandbox may pass anything of the same shape.
 */
import type { Node } from '../nodes/node.ts';

export interface RouteSpec {
  routeTableId: string;
  destinationCidr: string;
  networkInterfaceId: string;
}

/** A route as EC2 describes it (the fields the use cases read). */
export interface DescribedRoute {
  InstanceId?: string | undefined;
  NetworkInterfaceId?: string | undefined;
  GatewayId?: string | undefined;
  NatGatewayId?: string | undefined;
  TransitGatewayId?: string | undefined;
  VpcPeeringConnectionId?: string | undefined;
  State?: string | undefined;
  /** CreateRouteTable | CreateRoute | EnableVgwRoutePropagation | Advertisement (EC2 API model, RouteOrigin). */
  Origin?: string | undefined;
}

export interface RouteTables {
  /** The cluster's tables as EC2 describes them (`{RouteTableId, Tags, Routes}`), all pages. */
  listRouteTables(): Promise<readonly unknown[]>;
  createRoute(spec: RouteSpec): Promise<'created' | 'exists'>;
  replaceRoute(spec: RouteSpec): Promise<void>;
  deleteRoute(spec: { routeTableId: string; destinationCidr: string }): Promise<'deleted' | 'absent'>;
  describeRoute(routeTableId: string, destinationCidr: string): Promise<DescribedRoute | null>;
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
