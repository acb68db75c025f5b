/**
 * The EC2 Query actions the emulator speaks: each takes the request's form parameters and the
 * state, and returns the inner XML of `<ActionResponse>` or throws `Ec2ApiError`. Element names
 * follow the EC2 API reference (lower camel case, lists as `...Set` of `<item>`), which is what
 * `@aws-sdk/client-ec2`'s ec2Query deserializer reads. This file holds the instance and interface
 * actions and the action table; route tables and tags are in route-table-actions.ts, subnets in
 * subnet-actions.ts, parameter reading in params.ts.
 */
import { Ec2ApiError, ACCOUNT_ID, instanceStateCode } from './state.ts';
import type { Ec2State, InstanceRecord, NetworkInterfaceRecord } from './state.ts';
import { el, set } from './xml.ts';
import type { Xml, XmlContent } from './xml.ts';
import { applyFilters, bool, filters, list, optional, optionalInt, paginate, required, tagSet } from './params.ts';
import type { ActionHandler } from './params.ts';
import { createRoute, createTags, deleteRoute, deleteTags, describeRouteTables, replaceRoute } from './route-table-actions.ts';

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
    // No prefix filter: the API reference's DescribeNetworkInterfaces filter list names none, so
    // an `ipv4-prefix...` filter is refused here as an unknown one is (a holder is found by subnet).
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

/**
 * EC2 API reference, UnassignPrivateIpAddresses / UnassignIpv6Addresses: `Ipv4Prefix.N` /
 * `Ipv6Prefix.N` name the prefixes to take off the interface. A prefix the interface does not hold
 * is refused with `InvalidParameterValue` (the reference names no code for it; EC2's catch-all),
 * and nothing is taken off then.
 */
function unassignPrefixes(params: Parameters<ActionHandler>[0], state: Ec2State, family: 4 | 6): void {
  const param = family === 4 ? 'Ipv4Prefix' : 'Ipv6Prefix';
  const eniId = required(params, 'NetworkInterfaceId');
  if (!ENI_ID.test(eniId)) throw new Ec2ApiError('InvalidNetworkInterfaceID.Malformed', `Invalid id: "${eniId}"`);
  const addresses = family === 4 ? list(params, 'PrivateIpAddress') : list(params, 'Ipv6Addresses');
  if (addresses.length > 0) throw new Ec2ApiError('InvalidParameterCombination', `This emulator unassigns ${param}.N only.`);
  const prefixes = list(params, param);
  if (prefixes.length === 0) throw new Ec2ApiError('MissingParameter', `The request must contain the parameter ${param}.`);
  const eni = state.networkInterface(eniId);
  const held = family === 4 ? eni.ipv4Prefixes : eni.ipv6Prefixes;
  const missing = prefixes.find((p) => !held.includes(p));
  if (missing !== undefined) throw new Ec2ApiError('InvalidParameterValue', `Prefix ${missing} is not assigned to network interface ${eniId}.`);
  const kept = held.filter((p) => !prefixes.includes(p));
  held.splice(0, held.length, ...kept);
}

const unassignPrivateIpAddresses: ActionHandler = (params, state) => {
  unassignPrefixes(params, state, 4);
  return el('return', true);
};

const unassignIpv6Addresses: ActionHandler = (params, state) => {
  unassignPrefixes(params, state, 6);
  const eniId = required(params, 'NetworkInterfaceId');
  return [el('networkInterfaceId', eniId), set('unassignedIpv6Addresses', [], () => null), set('unassignedIpv6PrefixSet', list(params, 'Ipv6Prefix'), (p) => p)];
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
  UnassignPrivateIpAddresses: unassignPrivateIpAddresses,
  UnassignIpv6Addresses: unassignIpv6Addresses,
  CreateTags: createTags,
  DeleteTags: deleteTags,
};
