/**
 * Whether the configured cluster CIDRs are the nodes' at all: when managed nodes carry pod CIDRs and
 * none lies inside a cluster CIDR, the setting is wrong (a CLUSTER_CIDRS typo), not the nodes, and
 * acting on it would mark every node NetworkUnavailable. Reconcile refuses to run on it
 * (lib/usecases/absence.ts `refuseWorld`) and the plan CLI calls it bad input. Pure.
 */
import { containsCidr, tryParseCidr } from '../cidr/cidr.ts';
import type { LabelSelector } from './label-selector.ts';
import { unmanagedReason } from './managed-node.ts';
import { podCidrsOf } from './node.ts';
import type { Node } from './node.ts';

/** Managed nodes carry pod CIDRs, none inside the cluster CIDRs: how many carry one, and the first. */
export interface StrayPodCidrs {
  carriers: number;
  node: string;
  cidr: string;
}

/** The stray pod CIDRs of `nodes` against `clusterCidrs`, or null when one lies inside (or no managed node carries one). */
export function strayPodCidrs(nodes: readonly Node[], clusterCidrs: readonly string[], nodeSelector?: LabelSelector | null): StrayPodCidrs | null {
  const clusters = clusterCidrs.flatMap((text) => tryParseCidr(text) ?? []);
  let stray: StrayPodCidrs | null = null;
  for (const node of nodes) {
    if (unmanagedReason(node, nodeSelector) !== null) continue;
    const cidrs = podCidrsOf(node).flatMap((text) => tryParseCidr(text) ?? []);
    if (cidrs.length === 0) continue;
    if (cidrs.some((cidr) => clusters.some((cluster) => containsCidr(cluster, cidr)))) return null;
    if (stray === null) stray = { carriers: 1, node: node.metadata.name, cidr: podCidrsOf(node)[0] ?? '' };
    else stray.carriers += 1;
  }
  return stray;
}

/** The one line that says so, naming the setting (`CLUSTER_CIDRS` or `--cluster-cidrs`). */
export function strayPodCidrsMessage(stray: StrayPodCidrs, clusterCidrs: readonly string[], setting: string): string {
  return (
    `no managed node's pod CIDR lies in ${setting} ${clusterCidrs.join(',')} (${stray.carriers} nodes carry pod CIDRs outside them, ` +
    `e.g. ${stray.node} ${stray.cidr}); check ${setting}`
  );
}
