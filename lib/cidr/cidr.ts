/**
 * CIDR arithmetic for IPv4 and IPv6 as plain values.
 *
 * Every address is a `bigint` so one code path serves both families; a CIDR is always held in
 * canonical form (host bits cleared). IPv6 output follows RFC 5952 (lower case, longest run of
 * zero groups compressed). Parsing is strict about syntax (no octal or hex IPv4 parts, no leading
 * zeros, no zones) and lenient about host bits, which are cleared, as Kubernetes' ParseCIDRSloppy
 * does for the network part.
 */
import ipaddr from 'ipaddr.js';
import { PodrouteError } from '../errors.ts';

export type Family = 4 | 6;

export interface Cidr {
  readonly family: Family;
  /** Network address with host bits cleared. */
  readonly network: bigint;
  /** Prefix length: 0..32 for IPv4, 0..128 for IPv6. */
  readonly prefix: number;
}

type CidrErrorCode = 'INVALID_CIDR';

/**
 * Text that is not a CIDR: bad input, never retryable.
 * Exported for test/errors.test.ts (the error base) and test/cidr/cidr.test.ts (parseCidr's error).
 */
export class CidrError extends PodrouteError {
  readonly code: CidrErrorCode = 'INVALID_CIDR';
  override readonly name = 'CidrError';
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, { retryable: false, ...options });
  }
}

export const addressBits = (family: Family): number => (family === 4 ? 32 : 128);

const hostMask = (family: Family, prefix: number): bigint =>
  (1n << BigInt(addressBits(family) - prefix)) - 1n;

/**
 * Parses an address (no prefix) into its family and numeric value, or returns null.
 * Exported for its table-driven test (test/cidr/cidr.test.ts).
 */
export function tryParseAddress(text: string): { family: Family; value: bigint } | null {
  if (typeof text !== 'string') return null;
  if (!text.includes(':')) {
    const v4 = parseFourPartDecimal(text);
    return v4 === null ? null : { family: 4, value: BigInt(v4) };
  }
  const v6 = text.includes(':') && !text.includes('%') ? hexIpv6(text) : null;
  if (v6 !== null && ipaddr.IPv6.isValid(v6)) {
    return { family: 6, value: bytesToBigint(ipaddr.IPv6.parse(v6).toByteArray()) };
  }
  return null;
}

/**
 * Strict four-part decimal IPv4 (what ipaddr.js `IPv4.isValidFourPartDecimal` accepts: each part
 * 0 to 255, no leading zeros, no octal or hex) as a number, or null. Read by hand: pod CIDRs and
 * leases are parsed once per node each run, and this is several times faster than the regexes.
 */
function parseFourPartDecimal(text: string): number | null {
  let value = 0;
  let part = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x2e) {
      if (digits === 0 || dots === 3) return null;
      value = value * 256 + part;
      part = 0;
      digits = 0;
      dots += 1;
    } else if (c >= 0x30 && c <= 0x39) {
      if (digits > 0 && part === 0) return null;
      part = part * 10 + (c - 0x30);
      digits += 1;
      if (part > 255) return null;
    } else {
      return null;
    }
  }
  return dots === 3 && digits > 0 ? value * 256 + part : null;
}

/**
 * IPv6 text with a dotted IPv4 tail (`::ffff:192.0.2.1`) rewritten as two hex groups, or null when
 * the tail is not strict four-part decimal. ipaddr.js itself accepts octal and hex parts there and
 * reads `::192.0.2.1` as `::ffff:192.0.2.1`, so the tail is converted here.
 */
function hexIpv6(text: string): string | null {
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (!tail.includes('.')) return text;
  if (!ipaddr.IPv4.isValidFourPartDecimal(tail)) return null;
  const [a = 0, b = 0, c = 0, d = 0] = ipaddr.IPv4.parse(tail).octets;
  return `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

/** Parses `addr/prefix`; host bits are cleared. Returns null on any syntax error. */
export function tryParseCidr(text: unknown): Cidr | null {
  if (typeof text !== 'string') return null;
  const slash = text.indexOf('/');
  if (slash <= 0 || slash !== text.lastIndexOf('/')) return null;
  const addr = tryParseAddress(text.slice(0, slash));
  const prefixText = text.slice(slash + 1);
  if (!addr || !/^(0|[1-9]\d{0,2})$/.test(prefixText)) return null;
  const prefix = Number(prefixText);
  if (prefix > addressBits(addr.family)) return null;
  return { family: addr.family, prefix, network: addr.value & ~hostMask(addr.family, prefix) };
}

/**
 * `tryParseCidr` with the CIDR's canonical text: `text` itself when it is canonical already (IPv4
 * without host bits: the strict parse admits one spelling), so a caller keying on canonical text
 * keeps no copy of it.
 */
export function tryParseCanonical(text: unknown): { cidr: Cidr; text: string } | null {
  const cidr = tryParseCidr(text);
  if (cidr === null || typeof text !== 'string') return null;
  const address = cidr.family === 4 ? tryParseAddress(text.slice(0, text.indexOf('/'))) : null;
  return { cidr, text: address !== null && address.value === cidr.network ? text : formatCidr(cidr) };
}

/**
 * What an IPv4 `a.b.c.d/n` with leading zeros in a part stands for when read as decimal, as
 * kube-apiserver 1.32 reads a Node's pod CIDR (k8s.io/utils/net `ParseCIDRSloppy`, Go's parser
 * before 1.17; refusing them is KEP-4858 StrictIPCIDRValidation, alpha in 1.33) and so does the
 * node. Null for text without leading zeros (use `tryParseCidr`) or that does not parse.
 */
export function leadingZerosReading(text: unknown): Cidr | null {
  const parts = typeof text === 'string' ? /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(text)?.slice(1) : undefined;
  if (!parts?.some((part) => /^0\d/.test(part))) return null;
  const [a, b, c, d, prefix] = parts.map((part) => String(Number(part)));
  return tryParseCidr(`${a}.${b}.${c}.${d}/${prefix}`);
}

/** Parses `addr/prefix` or throws a `CidrError` whose message names the bad input. */
export function parseCidr(text: unknown): Cidr {
  const cidr = tryParseCidr(text);
  if (!cidr) throw new CidrError(`invalid CIDR ${JSON.stringify(text)}: want an IPv4 or IPv6 address/prefix such as 10.0.0.0/16 or fd00::/48`);
  return cidr;
}

/** Canonical text of a CIDR string (host bits cleared, RFC 5952), or throws `CidrError`. */
export const canonicalCidr = (text: unknown): string => formatCidr(parseCidr(text));

export function formatAddress(family: Family, value: bigint): string {
  if (family === 4) {
    const v = Number(value);
    return `${v >>> 24}.${(v >>> 16) & 0xff}.${(v >>> 8) & 0xff}.${v & 0xff}`;
  }
  const parts = Array.from({ length: 8 }, (_, i) => Number((value >> BigInt(112 - 16 * i)) & 0xffffn));
  return new ipaddr.IPv6(parts).toRFC5952String();
}

export const formatCidr = (cidr: Cidr): string => `${formatAddress(cidr.family, cidr.network)}/${cidr.prefix}`;

/** Last address inside the CIDR. */
export const lastAddress = (cidr: Cidr): bigint => cidr.network | hostMask(cidr.family, cidr.prefix);

export const containsAddress = (cidr: Cidr, family: Family, value: bigint): boolean =>
  cidr.family === family && (value & ~hostMask(family, cidr.prefix)) === cidr.network;

/** True when `inner` lies wholly inside `outer` (a CIDR contains itself). */
export const containsCidr = (outer: Cidr, inner: Cidr): boolean =>
  outer.family === inner.family && outer.prefix <= inner.prefix && containsAddress(outer, inner.family, inner.network);

/** True when the two ranges share at least one address. */
export const overlaps = (a: Cidr, b: Cidr): boolean => containsCidr(a, b) || containsCidr(b, a);

/** Whether two CIDRs written as text overlap; false when either is no CIDR. */
export function overlapsText(a: string, b: string): boolean {
  const [x, y] = [tryParseCidr(a), tryParseCidr(b)];
  return x !== null && y !== null && overlaps(x, y);
}

/** The overlap of two CIDRs: the narrower one when they overlap (CIDRs nest or are disjoint). */
export function intersection(a: Cidr, b: Cidr): Cidr | null {
  if (a.family !== b.family || !overlaps(a, b)) return null;
  return a.prefix >= b.prefix ? a : b;
}

/** Number of `/blockPrefix` blocks in `outer`. */
export function blockCount(outer: Cidr, blockPrefix: number): bigint {
  assertBlockPrefix(outer, blockPrefix);
  return 1n << BigInt(blockPrefix - outer.prefix);
}

/** The `index`-th `/blockPrefix` block of `outer` (0-based). */
export function blockAt(outer: Cidr, blockPrefix: number, index: bigint): Cidr {
  const count = blockCount(outer, blockPrefix);
  if (index < 0n || index >= count) throw new RangeError(`block index ${index} outside 0..${count - 1n}`);
  const shift = BigInt(addressBits(outer.family) - blockPrefix);
  return { family: outer.family, prefix: blockPrefix, network: outer.network + (index << shift) };
}

/** Index of the `/blockPrefix` block of `outer` that holds `address` (the address must be inside). */
export function blockIndexOf(outer: Cidr, blockPrefix: number, address: bigint): bigint {
  assertBlockPrefix(outer, blockPrefix);
  if (!containsAddress(outer, outer.family, address)) {
    throw new RangeError(`${formatAddress(outer.family, address)} is outside ${formatCidr(outer)}`);
  }
  return (address - outer.network) >> BigInt(addressBits(outer.family) - blockPrefix);
}

function assertBlockPrefix(outer: Cidr, blockPrefix: number): void {
  if (!Number.isInteger(blockPrefix) || blockPrefix < outer.prefix || blockPrefix > addressBits(outer.family)) {
    throw new RangeError(`block prefix /${blockPrefix} does not fit in ${formatCidr(outer)}`);
  }
}

function bytesToBigint(bytes: readonly number[]): bigint {
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  return value;
}
