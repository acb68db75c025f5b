/**
 * EC2 subnets as the reservations planner reads them: a loose schema for what
 * `aws ec2 describe-subnets --output json` prints (the DescribeSubnets response in PascalCase; EC2
 * API Reference, "Subnet") and a normaliser to plain values; absent, `null` and `undefined` alike.
 */
import { z } from 'zod';
import { type Cidr, tryParseCidr } from '../../cidr/cidr.ts';
import { InvalidInputError } from '../../errors.ts';

const optionalText = z.string().nullish();

const ipv6AssociationSchema = z.looseObject({
  AssociationId: optionalText,
  Ipv6CidrBlock: optionalText,
  // SubnetCidrBlockState.State in the EC2 API model: associating | associated | disassociating |
  // disassociated | failing | failed. Only an `associated` block holds addresses EC2 can hand out.
  Ipv6CidrBlockState: z.looseObject({ State: optionalText, StatusMessage: optionalText }).nullish(),
});

const subnetSchema = z.looseObject({
  SubnetId: z.string({ error: 'SubnetId must be a string' }).min(1, 'SubnetId must not be empty'),
  VpcId: optionalText,
  AvailabilityZone: optionalText,
  AvailabilityZoneId: optionalText,
  // Absent on an IPv6-only subnet (`Ipv6Native: true`; EC2 API Reference, "Subnet").
  CidrBlock: optionalText,
  AvailableIpAddressCount: z.number().int().nonnegative().nullish(),
  Ipv6CidrBlockAssociationSet: z.array(ipv6AssociationSchema).nullish(),
});

const describeSubnetsSchema = z.looseObject(
  { Subnets: z.array(subnetSchema, { error: 'Subnets must be an array of subnets' }) },
  { error: 'want an object {"Subnets": [...]}' },
);

export interface Subnet {
  readonly subnetId: string;
  readonly vpcId: string | null;
  /** The zone's name (`us-east-1a`), else its id (`use1-az1`), else null. */
  readonly availabilityZone: string | null;
  readonly ipv4: Cidr | null;
  /** Associated IPv6 blocks only (a block being associated or disassociated holds nothing yet). */
  readonly ipv6: readonly Cidr[];
  /** EC2's count of free IPv4 addresses, when the file has it. */
  readonly availableIpAddressCount: number | null;
}

/** Parses a DescribeSubnets result or throws InvalidInputError naming the first problem. */
export function parseSubnets(value: unknown): Subnet[] {
  const result = describeSubnetsSchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue && issue.path.length > 0 ? issue.path.map(String).join('.') : '(top level)';
    throw new InvalidInputError(`not an EC2 DescribeSubnets result: ${where}: ${issue?.message ?? 'invalid value'}`, { cause: result.error });
  }
  const seen = new Set<string>();
  return result.data.Subnets.map((raw, index) => {
    if (seen.has(raw.SubnetId)) throw new InvalidInputError(`not an EC2 DescribeSubnets result: Subnets.${index}: subnet ${raw.SubnetId} is listed twice`);
    seen.add(raw.SubnetId);
    let ipv4: Cidr | null = null;
    if (raw.CidrBlock != null) {
      ipv4 = tryParseCidr(raw.CidrBlock);
      if (ipv4?.family !== 4) throw new InvalidInputError(`subnet ${raw.SubnetId}: CidrBlock ${JSON.stringify(raw.CidrBlock)} is not an IPv4 CIDR`);
    }
    const ipv6: Cidr[] = [];
    for (const association of raw.Ipv6CidrBlockAssociationSet ?? []) {
      if (association.Ipv6CidrBlockState?.State !== 'associated' || association.Ipv6CidrBlock == null) continue;
      const cidr = tryParseCidr(association.Ipv6CidrBlock);
      if (cidr?.family !== 6) throw new InvalidInputError(`subnet ${raw.SubnetId}: Ipv6CidrBlock ${JSON.stringify(association.Ipv6CidrBlock)} is not an IPv6 CIDR`);
      ipv6.push(cidr);
    }
    return {
      subnetId: raw.SubnetId,
      vpcId: raw.VpcId ?? null,
      availabilityZone: raw.AvailabilityZone ?? raw.AvailabilityZoneId ?? null,
      ipv4,
      ipv6,
      availableIpAddressCount: raw.AvailableIpAddressCount ?? null,
    };
  });
}
