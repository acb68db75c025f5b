/** Recording fakes for the node-sync ports: every call is logged, in order, as one line. */
import type { CidrSet } from '../../lib/ipam/index.ts';
import type { Node } from '../../lib/nodes/node.ts';
import type { DualStackCloudAlias, DualStackKubeNodes } from '../../lib/nodesync/index.ts';
import type { CloudAlias, KubeNodes } from '../../lib/usecases/ports.ts';

export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const key of Reflect.ownKeys(value)) deepFreeze((value as Record<PropertyKey, unknown>)[key]);
    Object.freeze(value);
  }
  return value;
}

export function node(name: string, spec: Node['spec'] = undefined): Node {
  return deepFreeze(spec === undefined ? { metadata: { name } } : { metadata: { name }, spec });
}

/** Logs `allocateNext|occupy|release <cluster> <args>` and delegates to the real set. */
export function recordSet(set: CidrSet, calls: string[]): CidrSet {
  return {
    clusterCidr: set.clusterCidr,
    nodeMaskSize: set.nodeMaskSize,
    total: set.total,
    allocateNext: (owner) => {
      calls.push(`allocateNext ${set.clusterCidr} ${owner}`);
      return set.allocateNext(owner);
    },
    occupy: (cidr, owner) => {
      calls.push(`occupy ${set.clusterCidr} ${cidr} ${owner}`);
      return set.occupy(cidr, owner);
    },
    release: (cidr, owner) => {
      calls.push(`release ${set.clusterCidr} ${cidr} ${owner}`);
      return set.release(cidr, owner);
    },
    usage: () => set.usage(),
    leases: () => set.leases(),
    ownedLease: (owner) => set.ownedLease(owner),
    releaseLease: (lease) => set.releaseLease(lease),
    repair: (listed) => set.repair(listed),
  };
}

export interface FakeOptions<A> {
  alias?: A;
  /** Node returned by getNode (and updated, as a new object, by updatePodCidr). */
  stored?: Node;
  aliasErr?: Error;
  addAliasErr?: Error;
  getNodeErr?: Error;
  updatePodCidrErr?: Error;
  unavailableErr?: Error;
  /** When false, addAlias succeeds but alias() keeps answering as before (an eventually consistent cloud). */
  aliasVisible?: boolean;
}

export interface Recorder {
  calls: string[];
  messages: string[];
  state: { node: Node | undefined };
}

function kubeBase(opts: FakeOptions<unknown>, rec: Recorder): Omit<KubeNodes, 'updatePodCidr'> {
  return {
    async getNode(name) {
      rec.calls.push(`getNode ${name}`);
      if (opts.getNodeErr) throw opts.getNodeErr;
      if (!rec.state.node) throw new Error(`no node ${name}`);
      return rec.state.node;
    },
    async setNetworkUnavailable(name, unavailable) {
      rec.calls.push(`setNetworkUnavailable ${name} ${unavailable}`);
      if (opts.unavailableErr) throw opts.unavailableErr;
    },
    async warn(name, reason, message) {
      rec.calls.push(`warn ${name} ${reason}`);
      rec.messages.push(message);
    },
  };
}

export function singleStackFakes(opts: FakeOptions<string | null> = {}): Recorder & { cloud: CloudAlias; kube: KubeNodes } {
  const rec: Recorder = { calls: [], messages: [], state: { node: opts.stored } };
  let alias = opts.alias ?? null;
  const cloud: CloudAlias = {
    async alias(n) {
      rec.calls.push(`alias ${n.metadata.name}`);
      if (opts.aliasErr) throw opts.aliasErr;
      return alias;
    },
    async addAlias(n, cidr) {
      rec.calls.push(`addAlias ${n.metadata.name} ${cidr}`);
      if (opts.addAliasErr) throw opts.addAliasErr;
      if (opts.aliasVisible !== false) alias = cidr;
    },
  };
  const kube: KubeNodes = {
    ...kubeBase(opts, rec),
    async updatePodCidr(n, cidr) {
      rec.calls.push(`updatePodCidr ${n.metadata.name} ${cidr}`);
      if (opts.updatePodCidrErr) throw opts.updatePodCidrErr;
      rec.state.node = deepFreeze({ ...n, spec: { ...n.spec, podCIDR: cidr, podCIDRs: [cidr] } });
    },
  };
  return { ...rec, cloud, kube };
}

export function dualStackFakes(opts: FakeOptions<string[]> = {}): Recorder & { cloud: DualStackCloudAlias; kube: DualStackKubeNodes } {
  const rec: Recorder = { calls: [], messages: [], state: { node: opts.stored } };
  let aliases = [...(opts.alias ?? [])];
  const cloud: DualStackCloudAlias = {
    async alias(n) {
      rec.calls.push(`alias ${n.metadata.name}`);
      if (opts.aliasErr) throw opts.aliasErr;
      return [...aliases];
    },
    async addAlias(n, cidrs) {
      rec.calls.push(`addAlias ${n.metadata.name} ${cidrs.join(',')}`);
      if (opts.addAliasErr) throw opts.addAliasErr;
      if (opts.aliasVisible !== false) aliases = [...aliases, ...cidrs];
    },
  };
  const kube: DualStackKubeNodes = {
    ...kubeBase(opts, rec),
    async updatePodCidr(n, cidrs) {
      rec.calls.push(`updatePodCidr ${n.metadata.name} ${cidrs.join(',')}`);
      if (opts.updatePodCidrErr) throw opts.updatePodCidrErr;
      rec.state.node = deepFreeze({ ...n, spec: { ...n.spec, podCIDR: cidrs[0], podCIDRs: [...cidrs] } });
    },
  };
  return { ...rec, cloud, kube };
}

/** Settles a promise into its error (or null), for asserting on rejections. */
export async function errorOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
    return null;
  } catch (error) {
    return error;
  }
}
