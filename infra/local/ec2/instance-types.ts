/**
 * Per-interface address limits of a few real instance types: Amazon EC2 User Guide, "IP addresses per
 * network interface per instance type" (the same numbers DescribeInstanceTypes reports as
 * NetworkInfo.MaximumNetworkInterfaces / Ipv4AddressesPerInterface / Ipv6AddressesPerInterface).
 *
 * Amazon EC2 User Guide, "Assign prefixes to network interfaces" ("Prefix delegation basics"): each
 * delegated prefix takes one slot of the interface's address limit, IPv4 /28 prefixes from the IPv4
 * limit (the primary address takes one too), IPv6 /80 prefixes from the IPv6 limit. Past the limit EC2
 * answers `PrivateIpAddressLimitExceeded` ("Number of private addresses will exceed limit.", as
 * reported in aws/amazon-vpc-cni-k8s#989 and cilium/cilium#36428).
 */

export interface InterfaceLimits {
  /** MaximumNetworkInterfaces. */
  interfaces: number;
  /** Private IPv4 addresses per interface, the primary one included; each /28 prefix takes one. */
  ipv4PerInterface: number;
  /** IPv6 addresses per interface; each /80 prefix takes one. */
  ipv6PerInterface: number;
}

export const INSTANCE_TYPE_LIMITS: Readonly<Record<string, InterfaceLimits>> = {
  't3.nano': { interfaces: 2, ipv4PerInterface: 2, ipv6PerInterface: 2 },
  't3.small': { interfaces: 3, ipv4PerInterface: 4, ipv6PerInterface: 4 },
  't3.medium': { interfaces: 3, ipv4PerInterface: 6, ipv6PerInterface: 6 },
  'm5.large': { interfaces: 3, ipv4PerInterface: 10, ipv6PerInterface: 10 },
  'r5n.large': { interfaces: 3, ipv4PerInterface: 10, ipv6PerInterface: 10 },
  'm5.xlarge': { interfaces: 4, ipv4PerInterface: 15, ipv6PerInterface: 15 },
  'c5.4xlarge': { interfaces: 8, ipv4PerInterface: 30, ipv6PerInterface: 30 },
  'm5.4xlarge': { interfaces: 8, ipv4PerInterface: 30, ipv6PerInterface: 30 },
  'c5.metal': { interfaces: 15, ipv4PerInterface: 50, ipv6PerInterface: 50 },
};

/**
 * The type an instance gets when none is given, and whose limits an unknown type gets: m5.large, the
 * type DescribeInstances has always reported for the emulator's instances.
 */
export const DEFAULT_INSTANCE_TYPE = 'm5.large';

export function limitsOf(instanceType: string): InterfaceLimits {
  const known = Object.hasOwn(INSTANCE_TYPE_LIMITS, instanceType) ? INSTANCE_TYPE_LIMITS[instanceType] : undefined;
  return known ?? (INSTANCE_TYPE_LIMITS[DEFAULT_INSTANCE_TYPE] as InterfaceLimits);
}
