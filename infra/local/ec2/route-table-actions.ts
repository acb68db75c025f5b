/**
 * The emulator's route-table actions: DescribeRouteTables, CreateRoute, ReplaceRoute, DeleteRoute,
 * and CreateTags/DeleteTags (which the emulator allows on route tables only).
 */
import { Ec2ApiError, ACCOUNT_ID, parseDestination } from './state.ts';
import type { Ec2State, RouteTableRecord, Tag } from './state.ts';
import { el, set } from './xml.ts';
import type { XmlContent } from './xml.ts';
import { applyFilters, filters, list, optional, paginate, required, tagSet } from './params.ts';
import type { ActionHandler, Params } from './params.ts';

// ----- route tables -----

function propagatingGateways(table: RouteTableRecord): string[] {
  const ids = table.routes.flatMap((r) => (r.origin === 'EnableVgwRoutePropagation' && r.target.kind === 'gateway' ? [r.target.gatewayId] : []));
  return [...new Set(ids)];
}

function routeTableXml(state: Ec2State, table: RouteTableRecord): XmlContent {
  return [
    el('routeTableId', table.id),
    el('vpcId', table.vpcId),
    el('ownerId', ACCOUNT_ID),
    set('routeSet', state.routes(table.id), (r) => [
      el('destinationCidrBlock', r.destinationCidrBlock),
      el('destinationIpv6CidrBlock', r.destinationIpv6CidrBlock),
      el('gatewayId', r.gatewayId),
      el('instanceId', r.instanceId),
      el('instanceOwnerId', r.instanceOwnerId),
      el('networkInterfaceId', r.networkInterfaceId),
      el('state', r.state),
      el('origin', r.origin),
    ]),
    set('associationSet', [], () => null),
    // The gateways propagating into the table (DescribeRouteTables: PropagatingVgws).
    set('propagatingVgwSet', propagatingGateways(table), (gatewayId) => [el('gatewayId', gatewayId)]),
    tagSet(table.tags),
  ];
}

export const describeRouteTables: ActionHandler = (params, state) => {
  const ids = list(params, 'RouteTableId');
  let tables = [...state.routeTables.values()];
  if (ids.length > 0) {
    for (const id of ids) state.table(id);
    tables = tables.filter((t) => ids.includes(t.id));
  }
  tables = applyFilters(
    tables,
    filters(params),
    {
      'route-table-id': (t) => [t.id],
      'vpc-id': (t) => [t.vpcId],
      'owner-id': () => [ACCOUNT_ID],
      'route.destination-cidr-block': (t) => state.routes(t.id).map((r) => r.destinationCidrBlock),
      'route.destination-ipv6-cidr-block': (t) => state.routes(t.id).map((r) => r.destinationIpv6CidrBlock),
      'route.instance-id': (t) => state.routes(t.id).map((r) => r.instanceId),
      'route.state': (t) => state.routes(t.id).map((r) => r.state),
    },
    (t) => t.tags,
  );
  const { page, nextToken } = paginate('DescribeRouteTables', tables, params, { min: 5, max: 100 });
  return [set('routeTableSet', page, (t) => routeTableXml(state, t)), el('nextToken', nextToken)];
};

/** The destination (exactly one of the two parameters, of the matching family) and the target. */
function routeInput(params: Params) {
  const routeTableId = required(params, 'RouteTableId');
  const v4 = optional(params, 'DestinationCidrBlock');
  const v6 = optional(params, 'DestinationIpv6CidrBlock');
  if (v4 !== undefined && v6 !== undefined) {
    throw new Ec2ApiError('InvalidParameterCombination', 'Only one of destinationCidrBlock and destinationIpv6CidrBlock may be given.');
  }
  if (v4 === undefined && v6 === undefined) {
    throw new Ec2ApiError('MissingParameter', 'The request must contain the parameter destinationCidrBlock or destinationIpv6CidrBlock');
  }
  const param = v4 !== undefined ? 'destinationCidrBlock' : 'destinationIpv6CidrBlock';
  const destinationCidr = v4 ?? v6 ?? '';
  const parsed = parseDestination(destinationCidr, param);
  if ((parsed.family === 4) !== (v4 !== undefined)) {
    throw new Ec2ApiError('InvalidParameterValue', `Value (${destinationCidr}) for parameter ${param} is invalid. This is not a valid CIDR block.`);
  }
  const instanceId = optional(params, 'InstanceId');
  const networkInterfaceId = optional(params, 'NetworkInterfaceId');
  const gatewayId = optional(params, 'GatewayId');
  return {
    routeTableId,
    destinationCidr,
    ...(instanceId !== undefined ? { instanceId } : {}),
    ...(networkInterfaceId !== undefined ? { networkInterfaceId } : {}),
    ...(gatewayId !== undefined ? { gatewayId } : {}),
  };
}

export const createRoute: ActionHandler = (params, state) => {
  state.addRoute(routeInput(params));
  return el('return', true);
};

export const replaceRoute: ActionHandler = (params, state) => {
  state.replaceRoute(routeInput(params));
  return el('return', true);
};

export const deleteRoute: ActionHandler = (params, state) => {
  const routeTableId = required(params, 'RouteTableId');
  const v4 = optional(params, 'DestinationCidrBlock');
  const v6 = optional(params, 'DestinationIpv6CidrBlock');
  const destinationCidr = v4 ?? v6;
  if (destinationCidr === undefined) {
    throw new Ec2ApiError('MissingParameter', 'The request must contain the parameter destinationCidrBlock or destinationIpv6CidrBlock');
  }
  state.table(routeTableId);
  const parsed = parseDestination(destinationCidr, v4 !== undefined ? 'destinationCidrBlock' : 'destinationIpv6CidrBlock');
  if ((parsed.family === 4) !== (v4 !== undefined)) {
    throw new Ec2ApiError('InvalidParameterValue', `Value (${destinationCidr}) is not a valid CIDR block of the given family.`);
  }
  state.deleteRoute({ routeTableId, destinationCidr });
  return el('return', true);
};

// --- tags (route tables only) ---------------------------------------------------------------------
// EC2 API reference, CreateTags / DeleteTags and the Tag data type: ResourceId.N names up to 1000
// resources; Tag.N.Key is required, case-sensitive, at most 127 characters and may not begin with
// `aws:` (reserved); a value is at most 256 characters (absent means empty); an existing key is
// overwritten; a resource holds at most 50 user tags (TagLimitExceeded). DeleteTags removes a key
// whatever its value when no value is given, only a matching value when one is, and ignores keys the
// resource does not have; with no Tag.N it removes every user tag. The emulator tags route tables
// only: another resource id is refused (InvalidID), where EC2 would tag it.
const MAX_TAGS_PER_RESOURCE = 50;

function tagParams(params: Params): Array<{ key: string; value: string | undefined }> {
  const out: Array<{ key: string; value: string | undefined }> = [];
  for (let i = 1; params.has(`Tag.${i}.Key`) || params.has(`Tag.${i}.Value`); i++) {
    const key = params.get(`Tag.${i}.Key`);
    if (key === undefined || key === '') throw new Ec2ApiError('InvalidParameterValue', `Tag ${i}: the tag key must not be empty`);
    if (key.length > 127) throw new Ec2ApiError('InvalidParameterValue', `Tag ${i}: the tag key must be at most 127 characters`);
    if (key.toLowerCase().startsWith('aws:')) throw new Ec2ApiError('InvalidParameterValue', `Tag ${i}: tag keys starting with 'aws:' are reserved for internal use`);
    const value = params.get(`Tag.${i}.Value`);
    if (value !== undefined && value.length > 256) throw new Ec2ApiError('InvalidParameterValue', `Tag ${i}: the tag value must be at most 256 characters`);
    out.push({ key, value });
  }
  return out;
}

function taggedTables(params: Params, state: Ec2State): RouteTableRecord[] {
  const ids = list(params, 'ResourceId');
  if (ids.length === 0) throw new Ec2ApiError('MissingParameter', 'The request must contain the parameter resourceIdSet');
  if (ids.length > 1000) throw new Ec2ApiError('InvalidParameterValue', 'At most 1000 resource ids per request');
  return ids.map((id) => {
    if (!id.startsWith('rtb-')) throw new Ec2ApiError('InvalidID', `The ID '${id}' is not valid (the emulator tags route tables only)`);
    return state.table(id);
  });
}

export const createTags: ActionHandler = (params, state) => {
  const tags = tagParams(params);
  if (tags.length === 0) throw new Ec2ApiError('MissingParameter', 'The request must contain the parameter tagSet');
  const tables = taggedTables(params, state);
  // All or nothing: every table is checked against the limit before any is changed.
  for (const table of tables) {
    const keys = new Set([...table.tags.map((t) => t.key), ...tags.map((t) => t.key)]);
    if (keys.size > MAX_TAGS_PER_RESOURCE) throw new Ec2ApiError('TagLimitExceeded', `The maximum number of tags for resource ${table.id} has been reached.`);
  }
  for (const table of tables) {
    for (const { key, value } of tags) {
      const existing = table.tags.find((t) => t.key === key);
      if (existing) existing.value = value ?? '';
      else table.tags.push({ key, value: value ?? '' });
    }
  }
  return el('return', true);
};

export const deleteTags: ActionHandler = (params, state) => {
  const tags = tagParams(params);
  for (const table of taggedTables(params, state)) {
    const remove = (tag: Tag) =>
      tags.length === 0 || tags.some((t) => t.key === tag.key && (t.value === undefined || t.value === tag.value));
    const keep = table.tags.filter((tag) => !remove(tag));
    table.tags.splice(0, table.tags.length, ...keep);
  }
  return el('return', true);
};
