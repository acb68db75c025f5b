/**
 * Hostile scenarios for the sandbox: inputs podroute must not trust, played against a cluster that
 * has converged. Each is what an attacker, a lagging API server or an operator's typo can do:
 *
 * - `same-cidr`: a node registers with another node's exact pod CIDR;
 * - `sub-range`: nodes register with the first half (a /25 of a /24) and the last address (a /32)
 *   of other nodes' blocks;
 * - `cluster-cidr`: a node registers with the whole (first) cluster CIDR;
 * - `other-instance`: a node names another node's instance in its providerID;
 * - `short-listings`: node listings silently leave out a quarter of the nodes, every other time, for a while;
 * - `forged-admissions`: AdmissionReviews sent with the webhook token for nodes that are never
 *   stored (one of them claiming the whole cluster CIDR);
 * - `untagged-tables`: the cluster tag is removed from every cluster route table for a while, then restored;
 * - `instance-terminated`, `tampered-routes`, `forged-events`: event-driven repair
 *   (./event-scenarios.ts): an instance terminated under its Node, routes deleted and re-pointed by
 *   an IAM user, a forged and a stale termination event; they need the sandbox's event bus.
 *
 * The hostile kubelets do only what a real kubelet may: create their own Node, with their own
 * spec.podCIDR(s) and spec.providerID set at CREATE (the NodeRestriction admission plugin checks the
 * node's name, restricted labels, configSource and taints, not those fields: k8s
 * plugin/pkg/admission/noderestriction). The judge (report.ts) knows from the sandbox's record which
 * nodes are hostile and what they planted; honest nodes must stay ready and routed.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { NodeSource } from '../../../lib/usecases/ports.ts';
import { clusterTagKey } from '../../../lib/routes/index.ts';
import { parseCidr, formatCidr } from '../../../lib/cidr/cidr.ts';
import { readNode } from './report.ts';
import { admissionReview } from '../kube/admission.ts';
import { kubeletUser } from '../kube/identity.ts';
import type { Sandbox } from './types.ts';
import { forgedTermination, replayEvent, tamperRoute, terminateNode } from './event-scenarios.ts';

const EVENT_SCENARIOS = ['instance-terminated', 'tampered-routes', 'forged-events'] as const;
export const HOSTILE_SCENARIOS = ['same-cidr', 'sub-range', 'cluster-cidr', 'other-instance', 'short-listings', 'forged-admissions', 'untagged-tables', ...EVENT_SCENARIOS] as const;
export type HostileScenario = (typeof HOSTILE_SCENARIOS)[number];

/** Scenarios that need the sandbox's EventBridge bus (`cloudEvents`). */
export const isEventScenario = (name: string): boolean => (EVENT_SCENARIOS as readonly string[]).includes(name);

export const isHostileScenario = (name: string): name is HostileScenario => (HOSTILE_SCENARIOS as readonly string[]).includes(name);

/** Reconcile periods a short-listing or untagged-table spell lasts. */
const SPELL_TICKS = 4;
/** Forged admissions sent. */
const FORGED = 6;

/**
 * Node listings that come back short without an error, as a lagging or paging API server's may:
 * while set, every other `listNodes` leaves out `drop` nodes (a different few each time). Keyed
 * reads (`getNode`) stay honest.
 */
export class ShortListings {
  private drop = 0;
  private calls = 0;

  set(dropPerListing: number): void {
    if (!Number.isInteger(dropPerListing) || dropPerListing < 0) throw new RangeError(`dropPerListing ${dropPerListing}: want a whole number >= 0`);
    this.drop = dropPerListing;
  }

  wrap(inner: NodeSource): NodeSource {
    return {
      listNodes: async () => {
        const nodes = await inner.listNodes();
        this.calls += 1;
        if (this.drop === 0 || this.calls % 2 === 1 || nodes.length === 0) return nodes;
        const start = Math.floor(this.calls / 2) % nodes.length;
        const dropped = new Set(Array.from({ length: Math.min(this.drop, nodes.length) }, (_, i) => (start + i) % nodes.length));
        return nodes.filter((_, i) => !dropped.has(i));
      },
      getNode: (name) => inner.getNode(name),
      setNetworkUnavailable: (name, unavailable, text) => inner.setNetworkUnavailable(name, unavailable, text),
      updatePodCidr: (node, cidrs) => inner.updatePodCidr(node, cidrs),
      warn: (name, reason, message) => inner.warn(name, reason, message),
    };
  }
}

export interface HostileOptions {
  /** The schedule period (0: no schedule; a spell then runs the reconciles itself). */
  tickMs: number;
}

/** Plays the scenarios one after another against the sandbox's live nodes (honest ones are the victims). */
export async function runHostile(sandbox: Sandbox, scenarios: readonly HostileScenario[], options: HostileOptions): Promise<void> {
  for (const scenario of scenarios) await PLAY[scenario](sandbox, options);
}

/** Honest live nodes with a pod CIDR, by name, with their first (IPv4 when they have one) pod CIDR and instance. */
function victims(sandbox: Sandbox): Array<{ name: string; cidr: string; instanceId: string }> {
  const out: Array<{ name: string; cidr: string; instanceId: string }> = [];
  for (const raw of sandbox.kube.state.nodes()) {
    const node = readNode(raw);
    const own = node ? sandbox.record.get(node.name) : undefined;
    const cidr = node?.podCidrs.find((c) => !c.includes(':')) ?? node?.podCidrs[0];
    if (!node || !own || own.hostile || cidr === undefined) continue;
    out.push({ name: node.name, cidr, instanceId: own.instanceId });
  }
  if (out.length === 0) throw new Error('hostile scenarios need at least one honest node with a pod CIDR');
  return out.sort((a, b) => (a.name < b.name ? -1 : 1));
}

const pick = <T>(list: readonly T[], index: number): T => {
  const item = list[index % list.length];
  if (item === undefined) throw new Error('empty list');
  return item;
};

/** The first half of `cidr` (`half`), or its last address. */
function inside(cidr: string, part: 'half' | 'last'): string {
  const outer = parseCidr(cidr);
  const width = outer.family === 4 ? 32 : 128;
  const prefix = part === 'half' ? outer.prefix + 1 : width;
  const last = part === 'last';
  const offset = last ? (1n << BigInt(width - outer.prefix)) - (1n << BigInt(width - prefix)) : 0n;
  return formatCidr({ family: outer.family, prefix, network: outer.network + offset });
}

/** Runs `SPELL_TICKS` reconcile periods: waits them out under a schedule, or runs them. */
async function spell(sandbox: Sandbox, options: HostileOptions): Promise<void> {
  if (options.tickMs > 0) {
    await sleep(SPELL_TICKS * options.tickMs);
    return;
  }
  for (let i = 0; i < SPELL_TICKS; i++) await sandbox.tick().catch(() => undefined);
}

const zoneOf = (sandbox: Sandbox, instanceId: string): string => sandbox.ec2.state.instances.get(instanceId)?.availabilityZone ?? 'us-east-1a';

const PLAY: Record<HostileScenario, (sandbox: Sandbox, options: HostileOptions) => Promise<void>> = {
  'same-cidr': async (sandbox) => {
    const victim = pick(victims(sandbox), 0);
    await sandbox.joinNode('hostile-same-cidr', { podCidrs: [victim.cidr] });
  },
  'sub-range': async (sandbox) => {
    const all = victims(sandbox);
    await sandbox.joinNode('hostile-sub-range-25', { podCidrs: [inside(pick(all, 0).cidr, 'half')] });
    await sandbox.joinNode('hostile-sub-range-32', { podCidrs: [inside(pick(all, 1).cidr, 'last')] });
  },
  'cluster-cidr': async (sandbox) => {
    const cluster = sandbox.config.clusterCidrs[0];
    if (cluster === undefined) throw new Error('no cluster CIDR');
    await sandbox.joinNode('hostile-cluster-cidr', { podCidrs: [formatCidr(parseCidr(cluster))] });
  },
  'other-instance': async (sandbox) => {
    const victim = pick(victims(sandbox), 0);
    await sandbox.joinNode('hostile-other-instance', { providerId: `aws:///${zoneOf(sandbox, victim.instanceId)}/${victim.instanceId}` });
  },
  'short-listings': async (sandbox, options) => {
    sandbox.setShortListings(Math.max(1, Math.ceil(sandbox.kube.state.nodes().length / 4)));
    try {
      await spell(sandbox, options);
    } finally {
      sandbox.setShortListings(0);
    }
  },
  'forged-admissions': async (sandbox) => {
    const all = victims(sandbox);
    const cluster = sandbox.config.clusterCidrs[0];
    for (let i = 0; i < FORGED; i++) {
      const name = `forged-${String(i + 1).padStart(2, '0')}`;
      const victim = pick(all, i);
      const spec: Record<string, unknown> = { providerID: `aws:///${zoneOf(sandbox, victim.instanceId)}/${victim.instanceId}` };
      if (i === 0 && cluster !== undefined) Object.assign(spec, { podCIDR: formatCidr(parseCidr(cluster)), podCIDRs: [formatCidr(parseCidr(cluster))] });
      const object = { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name } }, spec };
      const answer = await fetch(`${sandbox.webhook.url}/webhook/${sandbox.webhook.secret}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(admissionReview(randomUUID(), 'CREATE', name, object, null, kubeletUser(name))),
      });
      await answer.body?.cancel();
    }
  },
  'untagged-tables': async (sandbox, options) => {
    const key = clusterTagKey(sandbox.config.clusterName);
    const tables = sandbox.routeTableIds.map((id) => sandbox.ec2.state.table(id));
    const removed = tables.map((table) => ({ table, tags: table.tags.filter((tag) => tag.key === key) }));
    for (const { table } of removed) table.tags.splice(0, table.tags.length, ...table.tags.filter((tag) => tag.key !== key));
    try {
      await spell(sandbox, options);
    } finally {
      for (const { table, tags } of removed) table.tags.push(...tags);
    }
  },
  'instance-terminated': async (sandbox) => {
    const victim = pick(victims(sandbox), 0);
    await terminateNode(sandbox, victim.name);
    // The node lifecycle controller deletes the Node of a terminated instance.
    await sandbox.leaveNode(victim.name, { terminate: false });
  },
  'tampered-routes': async (sandbox) => {
    const all = victims(sandbox);
    await tamperRoute(sandbox, pick(all, 0).name, { kind: 'delete' });
    await tamperRoute(sandbox, pick(all, 1).name, { kind: 'replace', toNode: pick(all, 0).name });
  },
  'forged-events': async (sandbox) => {
    await forgedTermination(sandbox, pick(victims(sandbox), 0).name);
    const old = sandbox.events?.delivered.find((d) => d.event['detail-type'] === 'EC2 Instance State-change Notification');
    if (old) await replayEvent(sandbox, old.event);
  },
};
