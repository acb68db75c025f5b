/**
 * An index of taken CIDRs (the ownership decider's claims, by their footprint) that answers which
 * taken one overlaps a CIDR, and the truncation of a CIDR to a shorter prefix.
 */
import { type Cidr, addressBits } from '../cidr/cidr.ts';

/**
 * The claims taken so far, for "does this CIDR overlap one of them" without comparing every pair:
 * CIDRs overlap when one holds the other, so each taken CIDR is keyed by itself and by its
 * truncation to every prefix a claim has; a CIDR is then looked up by its own key (it holds a
 * taken one) and by its truncations (a taken one holds it).
 */
export class TakenIndex<T extends { readonly footprint: Cidr }> {
  private readonly prefixes: number[];
  private readonly exact = new Map<string, T>();
  private readonly within = new Map<string, T>();

  constructor(prefixes: readonly number[]) {
    this.prefixes = [...new Set(prefixes)].sort((a, b) => a - b);
  }

  add(claim: T): void {
    const { footprint } = claim;
    this.exact.set(keyOf(footprint), claim);
    for (const prefix of this.prefixes) {
      if (prefix > footprint.prefix) break;
      const key = keyOf(truncate(footprint, prefix));
      if (!this.within.has(key)) this.within.set(key, claim);
    }
  }

  overlapping(cidr: Cidr): T | undefined {
    const holdsTaken = this.within.get(keyOf(cidr));
    if (holdsTaken) return holdsTaken;
    for (const prefix of this.prefixes) {
      if (prefix > cidr.prefix) break;
      const holder = this.exact.get(keyOf(truncate(cidr, prefix)));
      if (holder) return holder;
    }
    return undefined;
  }
}

const keyOf = (cidr: Cidr): string => `${cidr.family}/${cidr.prefix}/${cidr.network.toString(16)}`;

export function truncate(cidr: Cidr, prefix: number): Cidr {
  const shift = BigInt(addressBits(cidr.family) - prefix);
  return { family: cidr.family, prefix, network: (cidr.network >> shift) << shift };
}
