/**
 * The EC2 Query actions the emulator speaks: each takes the request's form parameters and the
 * state, and returns the inner XML of `<ActionResponse>` or throws `Ec2ApiError`. Element names
 * follow the EC2 API reference (lower camel case, lists as `...Set` of `<item>`), which is what
 * `@aws-sdk/client-ec2`'s ec2Query deserializer reads.
 */
import { Ec2ApiError, ACCOUNT_ID, instanceStateCode, parseDestination } from './state.ts';
import type { Ec2State, InstanceRecord, NetworkInterfaceRecord, RouteTableRecord, Tag } from './state.ts';
import { el, set } from './xml.ts';
import type { Xml, XmlContent } from './xml.ts';

export type Params = ReadonlyMap<string, string>;
export type ActionHandler = (params: Params, state: Ec2State) => XmlContent;

// ----- parameter helpers -----

export function required(params: Params, name: string): string {
  const value = params.get(name);
  if (value === undefined || value === '') throw new Ec2ApiError('MissingParameter', `The request must contain the parameter ${name}`);
  return value;
}

export function optional(params: Params, name: string): string | undefined {
  const value = params.get(name);
  return value === undefined || value === '' ? undefined : value;
}

/** Values of `Name.1`, `Name.2`, ... in index order. */
export function list(params: Params, name: string): string[] {
  const found: [number, string][] = [];
  const pattern = new RegExp(`^${name.replace('.', '\\.')}\\.(\\d+)$`);
  for (const [key, value] of params) {
    const m = pattern.exec(key);
    if (m?.[1] !== undefined) found.push([Number(m[1]), value]);
  }
  return found.sort((a, b) => a[0] - b[0]).map(([, value]) => value);
}

export interface Filter {
  name: string;
  values: string[];
}

/** `Filter.N.Name` / `Filter.N.Value.M`. */
export function filters(params: Params): Filter[] {
  const indices = new Set<number>();
  for (const key of params.keys()) {
    const m = /^Filter\.(\d+)\.Name$/.exec(key);
    if (m?.[1] !== undefined) indices.add(Number(m[1]));
  }
  return [...indices]
    .sort((a, b) => a - b)
    .map((i) => ({ name: required(params, `Filter.${i}.Name`), values: list(params, `Filter.${i}.Value`) }));
}

export function optionalInt(params: Params, name: string): number | undefined {
  const value = optional(params, name);
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new Ec2ApiError('InvalidParameterValue', `Value (${value}) for parameter ${name} is invalid.`);
  return Number(value);
}

function bool(value: string, name: string): boolean {
  const lower = value.toLowerCase();
  if (lower === 'true') return true;
  if (lower === 'false') return false;
  throw new Ec2ApiError('InvalidParameterValue', `Value (${value}) for parameter ${name} is invalid. Expected 'true' or 'false'.`);
}

/** EC2 filter values allow `*` (any run) and `?` (one character). */
function matches(pattern: string, value: string | undefined): boolean {
  if (value === undefined) return false;
  const re = new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
  return re.test(value);
}

/** Keeps the resources that pass every filter (values of one filter are ORed). */
export function applyFilters<T>(items: T[], given: Filter[], fields: Record<string, (item: T) => (string | undefined)[]>, tags?: (item: T) => Tag[]): T[] {
  const tests = given.map((filter) => {
    if (tags && filter.name === 'tag-key') {
      return (item: T) => tags(item).some((t) => filter.values.some((v) => matches(v, t.key)));
    }
    if (tags && filter.name === 'tag-value') {
      return (item: T) => tags(item).some((t) => filter.values.some((v) => matches(v, t.value)));
    }
    if (tags && filter.name.startsWith('tag:')) {
      const key = filter.name.slice(4);
      return (item: T) => tags(item).some((t) => t.key === key && filter.values.some((v) => matches(v, t.value)));
    }
    const field = fields[filter.name];
    if (!field) throw new Ec2ApiError('InvalidParameterValue', `The filter '${filter.name}' is invalid`);
    return (item: T) => field(item).some((actual) => filter.values.some((v) => matches(v, actual)));
  });
  return items.filter((item) => tests.every((test) => test(item)));
}

/** Offset pagination behind an opaque token, as EC2's MaxResults/NextToken. */
export function paginate<T>(action: string, items: T[], params: Params, limits: { min: number; max: number }): { page: T[]; nextToken?: string } {
  const maxResults = optionalInt(params, 'MaxResults');
  const token = optional(params, 'NextToken');
  if (maxResults !== undefined && (maxResults < limits.min || maxResults > limits.max)) {
    throw new Ec2ApiError('InvalidParameterValue', `Value ( ${maxResults} ) for parameter maxResults is invalid. Parameter must be between ${limits.min} and ${limits.max}.`);
  }
  let offset = 0;
  if (token !== undefined) {
    const decoded = /^(\w+):(\d+)$/.exec(Buffer.from(token, 'base64url').toString('utf8'));
    if (!decoded || decoded[1] !== action) throw new Ec2ApiError('InvalidPaginationToken', 'The specified pagination token is not valid or is expired.');
    offset = Number(decoded[2]);
  }
  if (maxResults === undefined) return { page: items.slice(offset) };
  const page = items.slice(offset, offset + maxResults);
  const next = offset + maxResults;
  return next < items.length ? { page, nextToken: Buffer.from(`${action}:${next}`, 'utf8').toString('base64url') } : { page };
}

export const tagSet = (tags: Tag[]): Xml => set('tagSet', tags, (t) => [el('key', t.key), el('value', t.value)]);

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

const describeRouteTables: ActionHandler = (params, state) => {
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

const createRoute: ActionHandler = (params, state) => {
  state.addRoute(routeInput(params));
  return el('return', true);
};

const replaceRoute: ActionHandler = (params, state) => {
  state.replaceRoute(routeInput(params));
  return el('return', true);
};

const deleteRoute: ActionHandler = (params, state) => {
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

// ----- instances and interfaces -----

function prefixSets(eni: NetworkInterfaceRecord): Xml[] {
  return [
    set('ipv4PrefixSet', eni.ipv4Prefixes, (p) => el('ipv4Prefix', p)),
    set('ipv6PrefixSet', eni.ipv6Prefixes, (p) => el('ipv6Prefix', p)),
  ];
}

function instanceInterfaceXml(eni: NetworkInterfaceRecord): XmlContent {
  const attachment = eni.attachment;
  return [
    el('networkInterfaceId', eni.id),
    el('subnetId', eni.subnetId),
    el('vpcId', eni.vpcId),
    el('description', ''),
    el('ownerId', ACCOUNT_ID),
    el('status', attachment ? 'in-use' : 'available'),
    el('macAddress', eni.macAddress),
    el('privateIpAddress', eni.privateIpAddress),
    el('privateDnsName', eni.privateDnsName),
    el('sourceDestCheck', eni.sourceDestCheck),
    set('groupSet', [], () => null),
    el(
      'attachment',
      attachment && [
        el('attachmentId', attachment.attachmentId),
        el('deviceIndex', attachment.deviceIndex),
        el('networkCardIndex', 0),
        el('status', 'attached'),
        el('attachTime', attachment.attachTime),
        el('deleteOnTermination', true),
      ],
    ),
    set('privateIpAddressesSet', [eni], (e) => [el('privateIpAddress', e.privateIpAddress), el('privateDnsName', e.privateDnsName), el('primary', true)]),
    set('ipv6AddressesSet', [], () => null),
    ...prefixSets(eni),
    el('interfaceType', 'interface'),
  ];
}

function instanceXml(state: Ec2State, instance: InstanceRecord): XmlContent {
  const running = instance.state === 'running';
  const enis = instance.networkInterfaceIds.flatMap((id) => {
    const eni = state.networkInterfaces.get(id);
    return eni ? [eni] : [];
  });
  return [
    el('instanceId', instance.id),
    el('imageId', 'ami-0123456789abcdef0'),
    el('instanceState', [el('code', instanceStateCode(instance.state)), el('name', instance.state)]),
    el('privateDnsName', running ? instance.privateDnsName : ''),
    el('dnsName', ''),
    el('reason', running ? '' : 'User initiated'),
    el('amiLaunchIndex', 0),
    set('productCodes', [], () => null),
    el('instanceType', instance.instanceType),
    el('launchTime', instance.launchTime),
    el('placement', [el('availabilityZone', instance.availabilityZone), el('groupName', ''), el('tenancy', 'default')]),
    el('monitoring', el('state', 'disabled')),
    el('subnetId', running ? instance.subnetId : undefined),
    el('vpcId', running ? instance.vpcId : undefined),
    el('privateIpAddress', running ? instance.privateIpAddress : undefined),
    el('sourceDestCheck', running ? state.sourceDestCheck(instance.id) : undefined),
    set('groupSet', [], () => null),
    el('architecture', 'x86_64'),
    el('rootDeviceType', 'ebs'),
    el('rootDeviceName', '/dev/xvda'),
    set('blockDeviceMapping', [], () => null),
    el('virtualizationType', 'hvm'),
    tagSet(instance.tags),
    el('hypervisor', 'xen'),
    set('networkInterfaceSet', enis, instanceInterfaceXml),
    el('ebsOptimized', false),
    el('enaSupport', true),
  ];
}

const describeInstances: ActionHandler = (params, state) => {
  const ids = list(params, 'InstanceId');
  for (const id of ids) {
    if (!/^i-[0-9a-f]{8}([0-9a-f]{9})?$/.test(id)) throw new Ec2ApiError('InvalidInstanceID.Malformed', `Invalid id: "${id}"`);
  }
  for (const id of ids) state.instance(id);
  // Eventual consistency: an instance inside its launch window is not listed yet either.
  let instances = [...state.instances.values()].filter((i) => !state.isFreshInstance(i));
  if (ids.length > 0) instances = instances.filter((i) => ids.includes(i.id));
  instances = applyFilters(
    instances,
    filters(params),
    {
      'instance-id': (i) => [i.id],
      'instance-state-name': (i) => [i.state],
      'instance-state-code': (i) => [String(instanceStateCode(i.state))],
      'private-dns-name': (i) => [i.privateDnsName],
      'private-ip-address': (i) => [i.privateIpAddress],
      'availability-zone': (i) => [i.availabilityZone],
      'vpc-id': (i) => [i.vpcId],
      'subnet-id': (i) => [i.subnetId],
      'network-interface.network-interface-id': (i) => i.networkInterfaceIds,
    },
    (i) => i.tags,
  );
  const { page, nextToken } = paginate('DescribeInstances', instances, params, { min: 5, max: 1000 });
  return [
    set('reservationSet', page, (instance) => [
      el('reservationId', `r-${instance.id.slice(2)}`),
      el('ownerId', ACCOUNT_ID),
      set('groupSet', [], () => null),
      set('instancesSet', [instance], (i) => instanceXml(state, i)),
    ]),
    el('nextToken', nextToken),
  ];
};

function networkInterfaceXml(eni: NetworkInterfaceRecord): XmlContent {
  const attachment = eni.attachment;
  return [
    el('networkInterfaceId', eni.id),
    el('subnetId', eni.subnetId),
    el('vpcId', eni.vpcId),
    el('availabilityZone', eni.availabilityZone),
    el('description', ''),
    el('ownerId', ACCOUNT_ID),
    el('requesterManaged', false),
    el('status', attachment ? 'in-use' : 'available'),
    el('macAddress', eni.macAddress),
    el('privateIpAddress', eni.privateIpAddress),
    el('privateDnsName', eni.privateDnsName),
    el('sourceDestCheck', eni.sourceDestCheck),
    set('groupSet', [], () => null),
    el(
      'attachment',
      attachment && [
        el('attachmentId', attachment.attachmentId),
        el('instanceId', attachment.instanceId),
        el('instanceOwnerId', ACCOUNT_ID),
        el('deviceIndex', attachment.deviceIndex),
        el('networkCardIndex', 0),
        el('status', 'attached'),
        el('attachTime', attachment.attachTime),
        el('deleteOnTermination', true),
      ],
    ),
    set('privateIpAddressesSet', [eni], (e) => [el('privateIpAddress', e.privateIpAddress), el('privateDnsName', e.privateDnsName), el('primary', true)]),
    set('ipv6AddressesSet', [], () => null),
    ...prefixSets(eni),
    el('interfaceType', 'interface'),
    tagSet(eni.tags ?? []),
  ];
}

const describeNetworkInterfaces: ActionHandler = (params, state) => {
  const ids = list(params, 'NetworkInterfaceId');
  for (const id of ids) {
    if (!ENI_ID.test(id)) throw new Ec2ApiError('InvalidNetworkInterfaceID.Malformed', `Invalid id: "${id}"`);
  }
  for (const id of ids) state.networkInterface(id);
  let enis = [...state.networkInterfaces.values()].filter((e) => !state.isFreshInterface(e));
  if (ids.length > 0) enis = enis.filter((e) => ids.includes(e.id));
  enis = applyFilters(enis, filters(params), {
    'network-interface-id': (e) => [e.id],
    'attachment.instance-id': (e) => [e.attachment?.instanceId],
    'attachment.device-index': (e) => [e.attachment === undefined ? undefined : String(e.attachment.deviceIndex)],
    'attachment.status': (e) => [e.attachment ? 'attached' : undefined],
    'vpc-id': (e) => [e.vpcId],
    'subnet-id': (e) => [e.subnetId],
    'availability-zone': (e) => [e.availabilityZone],
    'private-ip-address': (e) => [e.privateIpAddress],
    'ipv4-prefix.ipv4-prefix': (e) => e.ipv4Prefixes,
    'ipv6-prefix.ipv6-prefix': (e) => e.ipv6Prefixes,
  });
  const { page, nextToken } = paginate('DescribeNetworkInterfaces', enis, params, { min: 5, max: 1000 });
  return [set('networkInterfaceSet', page, networkInterfaceXml), el('nextToken', nextToken)];
};

const modifyInstanceAttribute: ActionHandler = (params, state) => {
  const instance = state.instance(required(params, 'InstanceId'));
  let value: boolean;
  const direct = optional(params, 'SourceDestCheck.Value');
  if (direct !== undefined) {
    value = bool(direct, 'SourceDestCheck.Value');
  } else if (optional(params, 'Attribute') === 'sourceDestCheck') {
    value = bool(required(params, 'Value'), 'Value');
  } else {
    throw new Ec2ApiError('InvalidParameterCombination', 'This emulator changes only the sourceDestCheck attribute.');
  }
  const eni = state.primaryInterface(instance.id);
  if (instance.state !== 'running' || !eni) {
    throw new Ec2ApiError('IncorrectInstanceState', `The instance '${instance.id}' is not in a state from which the attribute can be changed.`);
  }
  // The check belongs to each interface: with several attached, EC2 refuses the instance-level call.
  state.assertSingleInterface(instance);
  eni.sourceDestCheck = value;
  return el('return', true);
};

/** `eni-` and 8 or 17 hex digits, as EC2 issues them. */
const ENI_ID = /^eni-[0-9a-f]{8}([0-9a-f]{9})?$/;

/**
 * EC2 API reference, ModifyNetworkInterfaceAttribute: "Modifies the specified network interface
 * attribute. You can specify only one attribute at a time." NetworkInterfaceId is required; an
 * unknown interface is `InvalidNetworkInterfaceID.NotFound`, a malformed id
 * `InvalidNetworkInterfaceID.Malformed` (EC2 API reference, "Error codes for the Amazon EC2 API").
 * This emulator changes SourceDestCheck only.
 */
const modifyNetworkInterfaceAttribute: ActionHandler = (params, state) => {
  const id = required(params, 'NetworkInterfaceId');
  if (!ENI_ID.test(id)) throw new Ec2ApiError('InvalidNetworkInterfaceID.Malformed', `Invalid id: "${id}"`);
  const given = [...params.keys()].filter((key) => /^(SourceDestCheck|Description|SecurityGroupId|Attachment|EnaSrdSpecification|ConnectionTrackingSpecification|AssociatePublicIpAddress|EnablePrimaryIpv6|AssociatedSubnetId)(\.|$)/.test(key));
  const attributes = new Set(given.map((key) => key.split('.')[0]));
  if (attributes.size > 1) {
    throw new Ec2ApiError('InvalidParameterCombination', 'Only one attribute can be modified at a time.');
  }
  const eni = state.networkInterface(id);
  const raw = optional(params, 'SourceDestCheck.Value');
  if (raw === undefined) {
    if (attributes.size === 0) throw new Ec2ApiError('MissingParameter', 'The request must contain an attribute to modify.');
    throw new Ec2ApiError('InvalidParameterCombination', 'This emulator changes only the SourceDestCheck attribute.');
  }
  eni.sourceDestCheck = bool(raw, 'SourceDestCheck.Value');
  return el('return', true);
};

const assignPrivateIpAddresses: ActionHandler = (params, state) => {
  const eniId = required(params, 'NetworkInterfaceId');
  if (list(params, 'PrivateIpAddress').length > 0 || optional(params, 'SecondaryPrivateIpAddressCount') !== undefined) {
    throw new Ec2ApiError('InvalidParameterCombination', 'This emulator assigns IPv4 prefixes only (Ipv4Prefix.N or Ipv4PrefixCount).');
  }
  const assigned = state.assignPrefixes(eniId, 4, { prefixes: list(params, 'Ipv4Prefix'), count: optionalInt(params, 'Ipv4PrefixCount') });
  return [
    el('networkInterfaceId', eniId),
    set('assignedPrivateIpAddressesSet', [], () => null),
    set('assignedIpv4PrefixSet', assigned, (p) => el('ipv4Prefix', p)),
  ];
};

const assignIpv6Addresses: ActionHandler = (params, state) => {
  const eniId = required(params, 'NetworkInterfaceId');
  if (list(params, 'Ipv6Addresses').length > 0 || optional(params, 'Ipv6AddressCount') !== undefined) {
    throw new Ec2ApiError('InvalidParameterCombination', 'This emulator assigns IPv6 prefixes only (Ipv6Prefix.N or Ipv6PrefixCount).');
  }
  const assigned = state.assignPrefixes(eniId, 6, { prefixes: list(params, 'Ipv6Prefix'), count: optionalInt(params, 'Ipv6PrefixCount') });
  return [el('networkInterfaceId', eniId), set('assignedIpv6Addresses', [], () => null), set('assignedIpv6PrefixSet', assigned, (p) => p)];
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

const createTags: ActionHandler = (params, state) => {
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

const deleteTags: ActionHandler = (params, state) => {
  const tags = tagParams(params);
  for (const table of taggedTables(params, state)) {
    const remove = (tag: Tag) =>
      tags.length === 0 || tags.some((t) => t.key === tag.key && (t.value === undefined || t.value === tag.value));
    const keep = table.tags.filter((tag) => !remove(tag));
    table.tags.splice(0, table.tags.length, ...keep);
  }
  return el('return', true);
};

export const ACTIONS: Readonly<Record<string, ActionHandler>> = {
  DescribeRouteTables: describeRouteTables,
  CreateRoute: createRoute,
  ReplaceRoute: replaceRoute,
  DeleteRoute: deleteRoute,
  DescribeInstances: describeInstances,
  DescribeNetworkInterfaces: describeNetworkInterfaces,
  ModifyInstanceAttribute: modifyInstanceAttribute,
  ModifyNetworkInterfaceAttribute: modifyNetworkInterfaceAttribute,
  AssignPrivateIpAddresses: assignPrivateIpAddresses,
  AssignIpv6Addresses: assignIpv6Addresses,
  CreateTags: createTags,
  DeleteTags: deleteTags,
};
