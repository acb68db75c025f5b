import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import {
  type Cidr,
  CidrError,
  blockAt,
  blockCount,
  blockIndexOf,
  canonicalCidr,
  containsCidr,
  formatAddress,
  formatCidr,
  lastAddress,
  leadingZerosReading,
  overlaps,
  overlapsText,
  parseCidr,
  tryParseAddress,
  tryParseCanonical,
  tryParseCidr,
} from '../../lib/cidr/cidr.ts';

const c = (text: string): Cidr => parseCidr(text);

describe('parseCidr / formatCidr', () => {
  it.each([
    // IPv4: host bits cleared
    ['10.0.0.0/8', '10.0.0.0/8', 4, 8],
    ['10.1.2.3/8', '10.0.0.0/8', 4, 8],
    ['192.168.5.219/28', '192.168.5.208/28', 4, 28],
    ['127.123.3.0/16', '127.123.0.0/16', 4, 16],
    ['0.0.0.0/0', '0.0.0.0/0', 4, 0],
    ['255.255.255.255/0', '0.0.0.0/0', 4, 0],
    ['255.255.255.255/32', '255.255.255.255/32', 4, 32],
    ['10.0.0.1/31', '10.0.0.0/31', 4, 31],
    // IPv6: RFC 5952 output
    ['2001:db8::/64', '2001:db8::/64', 6, 64],
    ['2001:0db8:0000:0000::/64', '2001:db8::/64', 6, 64],
    ['2001:DB8::1/64', '2001:db8::/64', 6, 64],
    ['2001:0DB8:85A3::8A2E:0370:7334/50', '2001:db8:85a3::/50', 6, 50],
    ['2001:db8:0:0:0:0:0:1/128', '2001:db8::1/128', 6, 128],
    ['1:0:0:1:0:0:0:1/128', '1:0:0:1::1/128', 6, 128],
    ['2001:db8:0:0:1:0:0:1/128', '2001:db8::1:0:0:1/128', 6, 128],
    ['2001:db8:0:1:1:1:1:1/128', '2001:db8:0:1:1:1:1:1/128', 6, 128],
    ['::/0', '::/0', 6, 0],
    ['ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/1', '8000::/1', 6, 1],
    ['::1/128', '::1/128', 6, 128],
    ['beef:1234::/30', 'beef:1234::/30', 6, 30],
    ['2001:beef:1234::/34', '2001:beef::/34', 6, 34],
    // embedded dotted IPv4 (RFC 4291 2.2 form 3)
    ['::ffff:192.0.2.1/128', '::ffff:c000:201/128', 6, 128],
    ['::1.2.3.4/128', '::102:304/128', 6, 128],
    ['64:ff9b::192.0.2.33/96', '64:ff9b::/96', 6, 96],
  ] as const)('%s -> %s', (input, canonical, family, prefix) => {
    const cidr = parseCidr(input);
    expect(cidr.family).toBe(family);
    expect(cidr.prefix).toBe(prefix);
    expect(formatCidr(cidr)).toBe(canonical);
    expect(canonicalCidr(input)).toBe(canonical);
    // canonical text is a fixed point
    expect(canonicalCidr(canonical)).toBe(canonical);
  });

  it.each([
    ['empty', ''],
    ['missing prefix v4', '10.0.0.0'],
    ['missing prefix v6', '2001:db8::'],
    ['empty prefix', '10.0.0.0/'],
    ['empty address', '/8'],
    ['/33', '10.0.0.0/33'],
    ['/129', '2001:db8::/129'],
    ['/999', '10.0.0.0/999'],
    ['leading-zero prefix', '10.0.0.0/08'],
    ['signed prefix', '10.0.0.0/+8'],
    ['negative prefix', '10.0.0.0/-1'],
    ['exponent prefix', '10.0.0.0/1e1'],
    ['two slashes', '2001:db8::/64/1'],
    ['octal part', '010.0.0.0/8'],
    ['leading zero part', '10.00.0.0/16'],
    ['hex part', '0x0a.0.0.0/8'],
    ['hex whole', '0x0a000000/8'],
    ['short v4', '10.0.0/8'],
    ['single number', '10/8'],
    ['five parts', '1.2.3.4.5/8'],
    ['octet > 255', '256.0.0.0/8'],
    ['zone', 'fe80::1%eth0/64'],
    ['zone on v4-embedded', '::1.2.3.4%eth0/128'],
    ['leading space', ' 10.0.0.0/8'],
    ['trailing space', '10.0.0.0/8 '],
    ['trailing newline', '10.0.0.0/8\n'],
    ['two ::', '1::2::3/64'],
    ['nine groups', '1:2:3:4:5:6:7:8:9/64'],
    ['group too long', '12345::/16'],
    ['not hex', 'g::/16'],
    ['embedded v4 with leading zero', '::ffff:01.2.3.4/128'],
    ['embedded v4 in hex', '::ffff:0x1.2.3.4/128'],
    ['embedded v4 too many groups', '1:2:3:4:5:6:7:1.2.3.4/128'],
    ['full-width digits', '１０.0.0.0/8'],
    ['word', 'abcd/8'],
  ])('rejects %s (%j)', (_name, input) => {
    expect(tryParseCidr(input)).toBeNull();
    expect(() => parseCidr(input)).toThrow(CidrError);
    try {
      parseCidr(input);
    } catch (error) {
      expect(error).toBeInstanceOf(CidrError);
      expect((error as CidrError).code).toBe('INVALID_CIDR');
      expect((error as CidrError).message).toContain(JSON.stringify(input));
    }
  });

  it.each([[undefined], [null], [42], [{}], [['10.0.0.0/8']], [true]])('rejects the non-string %j', (input) => {
    expect(tryParseCidr(input)).toBeNull();
    expect(() => parseCidr(input)).toThrow(expect.objectContaining({ name: 'CidrError', code: 'INVALID_CIDR' }));
    expect(() => canonicalCidr(input)).toThrow(CidrError);
  });
});

describe('leadingZerosReading: IPv4 with leading zeros read as decimal (k8s.io/utils/net ParseCIDRSloppy)', () => {
  it.each([
    ['010.244.1.0/24', '10.244.1.0/24'],
    ['10.244.001.0/24', '10.244.1.0/24'],
    ['0010.244.1.7/24', '10.244.1.0/24'],
    ['10.244.1.0/024', '10.244.1.0/24'],
    ['010.244.1.0/33', null],
    ['256.244.01.0/24', null],
    ['10.244.1.0/24', null],
    ['0.0.0.0/0', null],
    ['fd00::0001/64', null],
    [42, null],
  ])('%j -> %j', (input, want) => {
    const cidr = leadingZerosReading(input);
    expect(cidr === null ? null : formatCidr(cidr)).toBe(want);
  });
});

describe('addresses', () => {
  it.each([
    ['10.1.2.3', 4, 0x0a010203n],
    ['0.0.0.0', 4, 0n],
    ['::', 6, 0n],
    ['::1', 6, 1n],
    ['2001:db8::', 6, 0x20010db8n << 96n],
    ['::1.2.3.4', 6, 0x01020304n],
    ['::ffff:1.2.3.4', 6, 0xffff01020304n],
  ] as const)('%s', (text, family, value) => {
    expect(tryParseAddress(text)).toEqual({ family, value });
    expect(tryParseAddress(formatAddress(family, value))).toEqual({ family, value });
  });

  it.each([['10.0.0.0/8'], [''], ['01.2.3.4'], ['fe80::1%eth0'], ['1.2.3.256'], ['1.2.3'], ['1.2.3.4.5'], ['1..3.4'], ['.1.2.3'], ['1.2.3.'], [' 1.2.3.4'], ['1.2.3.+4'], ['0x1.2.3.4'], ['1.2.3.00'], ['\u0661.2.3.4']])('rejects %j', (text) => {
    expect(tryParseAddress(text)).toBeNull();
  });

  it('reads IPv4 as ipaddr.js strict four-part decimal does, on any dotted text', () => {
    const part = fc.oneof(fc.nat(300).map(String), fc.stringMatching(/^[0-9]{0,4}$/), fc.constantFrom('0x1', '-1', ' 1', '1e1', '08'));
    fc.assert(
      fc.property(fc.array(part, { minLength: 1, maxLength: 6 }), (parts) => {
        const text = parts.join('.');
        const expected = ipaddr.IPv4.isValidFourPartDecimal(text) ? { family: 4, value: BigInt(ipaddr.IPv4.parse(text).toByteArray().reduce((v, b) => v * 256 + b, 0)) } : null;
        expect(tryParseAddress(text)).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  it('lastAddress is the broadcast / all-ones host part', () => {
    expect(formatAddress(4, lastAddress(c('10.1.0.0/16')))).toBe('10.1.255.255');
    expect(formatAddress(6, lastAddress(c('2001:db8::/64')))).toBe('2001:db8::ffff:ffff:ffff:ffff');
    expect(lastAddress(c('10.0.0.7/32'))).toBe(c('10.0.0.7/32').network);
  });
});

describe('containsCidr / overlaps / equality', () => {
  it.each([
    ['10.0.0.0/8', '10.1.0.0/16', true, true],
    ['10.1.0.0/16', '10.0.0.0/8', false, true],
    ['10.0.0.0/8', '10.0.0.0/8', true, true],
    ['10.0.0.0/8', '11.0.0.0/16', false, false],
    ['10.0.0.0/16', '10.0.255.0/24', true, true],
    ['10.0.0.0/16', '10.1.0.0/24', false, false],
    ['0.0.0.0/0', '255.255.255.255/32', true, true],
    ['10.0.0.0/8', '::/0', false, false],
    ['::/0', '10.0.0.0/8', false, false],
    ['2001:db8::/32', '2001:db8:ffff::/48', true, true],
    ['2001:db8::/32', '2001:db9::/48', false, false],
    ['2001:db8::/48', '2001:db8::/32', false, true],
    ['::/0', '::1/128', true, true],
    ['::ffff:0:0/96', '10.0.0.0/8', false, false],
  ])('%s ⊇ %s: %s, overlap %s', (outer, inner, contains, overlap) => {
    expect(containsCidr(c(outer), c(inner))).toBe(contains);
    expect(overlaps(c(outer), c(inner))).toBe(overlap);
    expect(overlaps(c(inner), c(outer))).toBe(overlap);
  });

  it.each([
    ['10.0.0.5/24', '10.0.0.0/24', true],
    ['10.0.0.0/24', '10.0.0.0/25', false],
    ['2001:DB8::/64', '2001:db8:0::1/64', true],
    ['0.0.0.0/0', '::/0', false],
  ])('%s and %s are the same CIDR: %s', (a, b, equal) => {
    expect(isDeepStrictEqual(c(a), c(b))).toBe(equal);
  });

  it.each([
    ['10.0.0.0/24', '10.0.0.128/25', true],
    ['10.0.0.128/25', '10.0.0.0/16', true],
    ['10.0.1.0/24', '10.0.0.0/24', false],
    ['10.0.0.0/8', 'fd00::/8', false],
    ['not a cidr', '10.0.0.0/8', false],
    ['10.0.0.0/8', '', false],
  ])('text %j overlaps %j: %s', (a, b, overlap) => {
    expect(overlapsText(a, b)).toBe(overlap);
  });
});

describe('blocks', () => {
  it.each([
    ['10.0.0.0/16', 24, 256n],
    ['10.0.0.0/16', 16, 1n],
    ['0.0.0.0/0', 32, 1n << 32n],
    ['2001:db8::/48', 64, 65536n],
    ['2001:db8::/32', 128, 1n << 96n],
    ['::/0', 128, 1n << 128n],
  ])('blockCount(%s, /%i) = %s', (outer, prefix, count) => {
    expect(blockCount(c(outer), prefix)).toBe(count);
  });

  it.each([
    // upstream TestIndexToCIDRBlock
    ['127.123.3.0/16', 24, 0n, '127.123.0.0/24'],
    ['127.123.0.0/16', 24, 15n, '127.123.15.0/24'],
    ['192.168.5.219/28', 32, 5n, '192.168.5.213/32'],
    ['2001:0db8:1234:3::/48', 64, 0n, '2001:db8:1234::/64'],
    ['2001:0db8:1234::/48', 64, 15n, '2001:db8:1234:f::/64'],
    ['2001:0db8:85a3::8a2e:0370:7334/50', 63, 6425n, '2001:db8:85a3:3232::/63'],
    ['2001:0db8::/32', 48, 0n, '2001:db8::/48'],
    ['2001:0db8::/32', 48, 15n, '2001:db8:f::/48'],
    ['2001:0db8:85a3::8a2e:0370:7334/32', 48, 6425n, '2001:db8:1919::/48'],
    ['2001:0db8:1234:ff00::/56', 72, 0n, '2001:db8:1234:ff00::/72'],
    ['2001:0db8:1234:ff00::/56', 72, 15n, '2001:db8:1234:ff00:f00::/72'],
    ['2001:0db8:1234:ff00::0370:7334/56', 72, 6425n, '2001:db8:1234:ff19:1900::/72'],
    ['2001:0db8:1234:0:1234::/80', 96, 0n, '2001:db8:1234:0:1234::/96'],
    ['2001:0db8:1234:0:1234::/80', 96, 15n, '2001:db8:1234:0:1234:f::/96'],
    ['2001:0db8:1234:ff00::0370:7334/80', 96, 6425n, '2001:db8:1234:ff00:0:1919::/96'],
    // ours: offsets beyond 2^53 need bigint
    ['2001:db8::/32', 128, (1n << 96n) - 1n, '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff/128'],
    ['2001:db8::/32', 96, (1n << 64n) - 1n, '2001:db8:ffff:ffff:ffff:ffff::/96'],
    ['2001:db8::/32', 128, (1n << 53n) + 1n, '2001:db8::20:0:0:1/128'],
    ['::/0', 128, (1n << 128n) - 1n, 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128'],
    ['0.0.0.0/0', 32, (1n << 32n) - 1n, '255.255.255.255/32'],
  ])('blockAt(%s, /%i, %s) = %s and back', (outer, prefix, index, block) => {
    const cluster = c(outer);
    const got = blockAt(cluster, prefix, index);
    expect(formatCidr(got)).toBe(block);
    expect(blockIndexOf(cluster, prefix, got.network)).toBe(index);
    expect(blockIndexOf(cluster, prefix, lastAddress(got))).toBe(index);
  });

  it.each([
    // upstream TestGetBitforCIDR
    ['127.0.0.0/8', 16, '127.0.0.0', 0n],
    ['be00::/8', 16, 'be00::', 0n],
    ['127.0.0.0/8', 16, '127.123.0.0', 123n],
    ['be00::/8', 16, 'beef::', 0xefn],
    ['127.0.0.0/8', 16, '127.168.0.0', 168n],
    ['be00::/8', 16, 'be68::', 0x68n],
    ['127.0.0.0/8', 16, '127.224.0.0', 224n],
    ['be00::/8', 16, 'be24::', 0x24n],
    ['192.168.0.0/16', 24, '192.168.12.0', 12n],
    ['beef::/16', 24, 'beef:1200::', 0x12n],
    ['192.168.0.0/16', 24, '192.168.151.0', 151n],
    ['beef::/16', 24, 'beef:9700::', 0x97n],
    // an address inside a block, not only its first one
    ['192.168.0.0/16', 24, '192.168.151.200', 151n],
    ['2001:db8::/32', 112, '2001:db8:ffff:ffff:ffff:ffff:ffff:1', (1n << 80n) - 1n],
  ])('blockIndexOf(%s, /%i, %s) = %s', (outer, prefix, address, index) => {
    const parsed = tryParseAddress(address);
    expect(parsed).not.toBeNull();
    expect(blockIndexOf(c(outer), prefix, parsed?.value ?? -1n)).toBe(index);
  });

  it.each([
    ['192.168.0.0/16', 24, '127.168.224.0'],
    ['beef::/16', 24, '2001:db00::'],
  ])('blockIndexOf(%s, /%i, %s) throws: outside', (outer, prefix, address) => {
    expect(() => blockIndexOf(c(outer), prefix, tryParseAddress(address)?.value ?? -1n)).toThrow(RangeError);
  });

  it('blockIndexOf refuses an address of the other family with the same number', () => {
    // 10.0.0.0 as a number is inside ::/64 too; the family must not matter to the math silently.
    expect(() => blockIndexOf(c('::/96'), 112, 0x0a000000n)).not.toThrow();
    expect(blockIndexOf(c('10.0.0.0/8'), 16, 0x0a010000n)).toBe(1n);
  });

  it.each([
    ['10.0.0.0/16', 24, 256n],
    ['10.0.0.0/16', 24, -1n],
    ['2001:db8::/48', 64, 65536n],
  ])('blockAt(%s, /%i, %s) throws: index out of range', (outer, prefix, index) => {
    expect(() => blockAt(c(outer), prefix, index)).toThrow(RangeError);
  });

  it.each([
    ['10.0.0.0/16', 8],
    ['10.0.0.0/16', 33],
    ['10.0.0.0/16', 24.5],
    ['2001:db8::/48', 129],
  ])('blockCount(%s, /%s) throws: prefix does not fit', (outer, prefix) => {
    expect(() => blockCount(c(outer), prefix)).toThrow(RangeError);
    expect(() => blockAt(c(outer), prefix, 0n)).toThrow(RangeError);
  });
});

describe('tryParseCanonical', () => {
  it.each<[string, string | null, boolean]>([
    ['10.0.0.0/8', '10.0.0.0/8', true],
    ['10.1.2.3/8', '10.0.0.0/8', false],
    ['255.255.255.240/28', '255.255.255.240/28', true],
    ['2001:db8::/64', '2001:db8::/64', false],
    ['2001:DB8::/64', '2001:db8::/64', false],
    ['010.0.0.0/8', null, false],
    ['10.0.0.0/33', null, false],
  ])('%s reads as %s (the given text itself: %s)', (text, canonical, same) => {
    const parsed = tryParseCanonical(text);
    expect(parsed?.text ?? null).toBe(canonical);
    if (parsed) expect(parsed.cidr).toEqual(parseCidr(text));
    // Same text, and the one formatCidr gives: the caller may key on it.
    if (parsed) expect(parsed.text).toBe(formatCidr(parsed.cidr));
    expect(parsed !== null && same).toBe(parsed !== null && canonical === text && !text.includes(':'));
  });
});
