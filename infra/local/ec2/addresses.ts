/**
 * How the emulator picks addresses and prefixes the way EC2 does: anywhere in the subnet, not from
 * its bottom. Amazon VPC User Guide, "Subnet CIDR reservations": with several `prefix` reservations
 * "we choose the IP addresses to assign to network interfaces at random"; nothing in EC2's
 * documentation promises any order for automatic addresses either. The pick here is pseudo-random
 * from a seed, so a run is repeatable.
 *
 * Never handed out automatically (Amazon VPC User Guide, "Subnet CIDR blocks"): the first four
 * addresses and the last one of an IPv4 subnet (network, VPC router, DNS, reserved for future use,
 * broadcast); any address inside a subnet CIDR reservation, `explicit` or `prefix` (only prefix
 * delegation draws from a `prefix` reservation).
 */
import { addressBits, lastAddress } from '../../../lib/cidr/cidr.ts';
import type { Cidr } from '../../../lib/cidr/cidr.ts';


/** A random index in [0, count), also for counts past 2^53 (IPv6 blocks). */
export function randomIndex(random: () => number, count: bigint): bigint {
  if (count <= 0n) throw new RangeError('randomIndex: empty range');
  // 64 random bits are plenty for the emulator's ranges: /64 subnets of /80 blocks are 2^16.
  const high = BigInt(Math.floor(random() * 2 ** 32));
  const low = BigInt(Math.floor(random() * 2 ** 32));
  return ((high << 32n) | low) % count;
}

/** Whether an IPv4 address is one of the five a subnet keeps for itself. */
export function isSubnetReserved(subnet: Cidr, value: bigint): boolean {
  if (subnet.family !== 4) return false;
  return value - subnet.network < 4n || value === lastAddress(subnet);
}

/**
 * The first index, from a random start and wrapping once, whose candidate `free` accepts; null when
 * none does. `count` candidates are numbered 0..count-1.
 */
export function probe(random: () => number, count: bigint, free: (index: bigint) => boolean): bigint | null {
  if (count <= 0n) return null;
  const start = randomIndex(random, count);
  for (let step = 0n; step < count; step++) {
    const index = (start + step) % count;
    if (free(index)) return index;
  }
  return null;
}

/** Number of /`size` blocks in a CIDR. */
export function blocksIn(cidr: Cidr, size: number): bigint {
  return size < cidr.prefix ? 0n : 1n << BigInt(size - cidr.prefix);
}

/** The `index`-th /`size` block of a CIDR, as [first, last] addresses. */
export function blockRange(cidr: Cidr, size: number, index: bigint): [bigint, bigint] {
  const span = 1n << BigInt(addressBits(cidr.family) - size);
  const first = cidr.network + index * span;
  return [first, first + span - 1n];
}
