/**
 * Prefixes mode's readiness decider: a node is reachable once it holds its pod CIDRs and each is
 * delegated to its primary interface (a prefix assigned to an interface is one EC2 checked and
 * delegated to it: EC2 User Guide, "Prefix delegation for Amazon EC2 network interfaces"). No
 * route controller is involved, so the condition says what podroute did instead.
 */
import type { Readiness, ReadinessFacts } from '../data-plane.ts';

export function prefixReadiness(facts: ReadinessFacts): Readiness {
  if (facts.refused === true) return { networkUnavailable: true, reason: 'NoPrefixDelegated', message: 'podroute could not delegate the node\'s pod CIDRs to its network interface' };
  if (facts.podCidrsComplete && facts.carried) return { networkUnavailable: false, reason: 'PrefixDelegated', message: 'podroute delegated the node\'s pod CIDRs to its primary network interface' };
  return { networkUnavailable: 'pending', reason: 'NoPrefixDelegated', message: 'Node created without delegated prefixes' };
}
