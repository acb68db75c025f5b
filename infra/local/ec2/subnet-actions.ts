/**
 * Subnets and subnet CIDR reservations over the Query API. Element names are the EC2 API model's
 * (`@aws-sdk/client-ec2`'s schema: Subnet, SubnetCidrReservation, GetSubnetCidrReservationsResult's
 * `subnetIpv4CidrReservationSet` / `subnetIpv6CidrReservationSet`, CreateSubnetCidrReservationResult's
 * `subnetCidrReservation`, DeleteSubnetCidrReservationResult's `deletedSubnetCidrReservation`).
 */
import { ACCOUNT_ID, Ec2ApiError } from './state.ts';
import type { Ec2State, ReservationRecord, SubnetRecord } from './state.ts';
import { applyFilters, filters, list, optional, paginate, required, tagSet } from './params.ts';
import type { ActionHandler } from './params.ts';
import { parseReservationType } from './reservations.ts';
import { el, set } from './xml.ts';
import type { XmlContent } from './xml.ts';

/**
 * A zone's id (`use1-az1` for `us-east-1a`). Real zone ids map to names differently per account
 * (Amazon EC2 User Guide, "AZ IDs"); this mapping is the emulator's own, stable within a run.
 */
export function zoneIdOf(zone: string): string {
  const m = /^([a-z]+)-([a-z]+)-(\d+)([a-z])$/.exec(zone);
  if (!m) return zone;
  const [, area = '', direction = '', number = '', letter = 'a'] = m;
  return `${area.slice(0, 2)}${direction[0] ?? ''}${number}-az${letter.charCodeAt(0) - 96}`;
}

function subnetXml(state: Ec2State, subnet: SubnetRecord): XmlContent {
  return [
    el('subnetId', subnet.id),
    el('subnetArn', `arn:aws:ec2:${subnet.availabilityZone.slice(0, -1)}:${ACCOUNT_ID}:subnet/${subnet.id}`),
    el('state', 'available'),
    el('ownerId', ACCOUNT_ID),
    el('vpcId', subnet.vpcId),
    el('cidrBlock', subnet.cidrBlock),
    el('availableIpAddressCount', state.availableIpv4Count(subnet.id)),
    el('availabilityZone', subnet.availabilityZone),
    el('availabilityZoneId', zoneIdOf(subnet.availabilityZone)),
    el('defaultForAz', false),
    el('mapPublicIpOnLaunch', false),
    el('assignIpv6AddressOnCreation', false),
    set('ipv6CidrBlockAssociationSet', subnet.ipv6CidrBlock === undefined ? [] : [subnet.ipv6CidrBlock], (block) => [
      el('associationId', `subnet-cidr-assoc-${subnet.id.slice('subnet-'.length)}`),
      el('ipv6CidrBlock', block),
      el('ipv6CidrBlockState', el('state', 'associated')),
    ]),
    tagSet(subnet.tags ?? []),
  ];
}

/**
 * EC2 API reference, DescribeSubnets: SubnetId.N (an unknown id is `InvalidSubnetID.NotFound`),
 * filters `availability-zone`, `availability-zone-id`, `cidr-block`, `ipv6-cidr-block-association.
 * ipv6-cidr-block`, `owner-id`, `state`, `subnet-id`, `vpc-id`, `default-for-az`, tags; MaxResults
 * from 5 to 1000 with NextToken.
 */
const describeSubnets: ActionHandler = (params, state) => {
  const ids = list(params, 'SubnetId');
  for (const id of ids) state.subnet(id);
  let subnets = [...state.subnets.values()];
  if (ids.length > 0) subnets = subnets.filter((s) => ids.includes(s.id));
  subnets = applyFilters(
    subnets,
    filters(params),
    {
      'availability-zone': (s) => [s.availabilityZone],
      'availability-zone-id': (s) => [zoneIdOf(s.availabilityZone)],
      'cidr-block': (s) => [s.cidrBlock],
      'ipv6-cidr-block-association.ipv6-cidr-block': (s) => [s.ipv6CidrBlock],
      'owner-id': () => [ACCOUNT_ID],
      state: () => ['available'],
      'subnet-id': (s) => [s.id],
      'vpc-id': (s) => [s.vpcId],
      'default-for-az': () => ['false'],
    },
    (s) => s.tags ?? [],
  );
  const { page, nextToken } = paginate('DescribeSubnets', subnets, params, { min: 5, max: 1000 });
  return [set('subnetSet', page, (s) => subnetXml(state, s)), el('nextToken', nextToken)];
};

function reservationXml(r: ReservationRecord): XmlContent {
  return [
    el('subnetCidrReservationId', r.id),
    el('subnetId', r.subnetId),
    el('cidr', r.cidr),
    el('reservationType', r.type),
    el('ownerId', ACCOUNT_ID),
    el('description', r.description),
    tagSet(r.tags),
  ];
}

/** EC2 API reference, CreateSubnetCidrReservation: SubnetId, Cidr, ReservationType required. */
const createSubnetCidrReservation: ActionHandler = (params, state) => {
  const subnetId = required(params, 'SubnetId');
  const cidr = required(params, 'Cidr');
  const type = parseReservationType(required(params, 'ReservationType'));
  const description = optional(params, 'Description');
  const created = state.createReservation({ subnetId, cidr, type, ...(description !== undefined ? { description } : {}) });
  return el('subnetCidrReservation', reservationXml(created));
};

/**
 * EC2 API reference, GetSubnetCidrReservations: SubnetId required; filters `reservationType`,
 * `subnet-id`, `owner-id`, tags; MaxResults from 5 to 1000; the answer splits the page by family.
 */
const getSubnetCidrReservations: ActionHandler = (params, state) => {
  const subnetId = required(params, 'SubnetId');
  state.subnet(subnetId);
  const found = applyFilters(
    state.reservationsOf(subnetId),
    filters(params),
    {
      reservationType: (r) => [r.type],
      'subnet-id': (r) => [r.subnetId],
      'owner-id': () => [ACCOUNT_ID],
    },
    (r) => r.tags,
  );
  const { page, nextToken } = paginate('GetSubnetCidrReservations', found, params, { min: 5, max: 1000 });
  return [
    set('subnetIpv4CidrReservationSet', page.filter((r) => r.family === 4), reservationXml),
    set('subnetIpv6CidrReservationSet', page.filter((r) => r.family === 6), reservationXml),
    el('nextToken', nextToken),
  ];
};

/** EC2 API reference, DeleteSubnetCidrReservation: SubnetCidrReservationId required. */
const deleteSubnetCidrReservation: ActionHandler = (params, state) => {
  const id = required(params, 'SubnetCidrReservationId');
  if (!/^scr-[0-9a-f]{8}([0-9a-f]{9})?$/.test(id)) throw new Ec2ApiError('InvalidSubnetCidrReservationID.Malformed', `Invalid id: "${id}"`);
  return el('deletedSubnetCidrReservation', reservationXml(state.deleteReservation(id)));
};

export const SUBNET_ACTIONS: Readonly<Record<string, ActionHandler>> = {
  DescribeSubnets: describeSubnets,
  CreateSubnetCidrReservation: createSubnetCidrReservation,
  GetSubnetCidrReservations: getSubnetCidrReservations,
  DeleteSubnetCidrReservation: deleteSubnetCidrReservation,
};
