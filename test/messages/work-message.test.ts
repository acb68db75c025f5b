import { describe, expect, it } from 'vitest';
import { InvalidInputError } from '../../lib/errors.ts';
import {
  messageKey,
  nodeLeftMessage,
  parseWorkMessage,
  serializeWorkMessage,
  syncNodeMessage,
  toMessages,
  type WorkMessage,
} from '../../lib/messages/work-message.ts';
import { MemoryWorkQueue, dedupeMessages } from '../../lib/messages/work-queue.ts';
import { thrownBy } from '../support/thrown.ts';

type PlannedRoutes = Parameters<typeof toMessages>[0];

const RTB = 'rtb-0123456789abcdef0';
const RTB2 = 'rtb-0fedcba987654321f';
const I1 = 'i-0123456789abcdef0';
const I2 = 'i-00000000aaaaaaaa1';

const create = { v: 1, kind: 'create', routeTableId: RTB, destinationCidr: '10.0.1.0/24', node: 'ip-10-0-0-1.ec2.internal', instanceId: I1 };

describe('parseWorkMessage: valid messages', () => {
  it.each<[string, WorkMessage]>([
    ['create', create as WorkMessage],
    ['create with reason', { ...create, reason: 'moved' } as WorkMessage],
    ['replace', { ...create, kind: 'replace', reason: 'blackhole' } as WorkMessage],
    ['replace IPv6', { ...create, kind: 'replace', destinationCidr: 'fd00:1:2::/80', reason: 'moved' } as WorkMessage],
    ['delete blackhole', { v: 1, kind: 'delete', routeTableId: RTB, destinationCidr: '10.0.9.0/24', reason: 'blackhole' }],
    ['delete no-owner', { v: 1, kind: 'delete', routeTableId: RTB, destinationCidr: '2001:db8::/64', reason: 'no-owner' }],
    ['sync-node', { v: 1, kind: 'sync-node', node: 'node-1' }],
    ['sync-node 253 chars', { v: 1, kind: 'sync-node', node: `${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}` }],
    ['short ids (8 hex)', { ...create, routeTableId: 'rtb-0123abcd', instanceId: 'i-0123abcd' } as WorkMessage],
    // Version 2: the current producers' node-left, and v1 kinds written as v2 by a later producer.
    ['node-left (v2)', { v: 2, kind: 'node-left', node: 'ip-10-0-0-1.ec2.internal' }],
    ['create as v2', { ...create, v: 2 } as WorkMessage],
    ['delete as v2', { v: 2, kind: 'delete', routeTableId: RTB, destinationCidr: '10.0.9.0/24', reason: 'blackhole' }],
    ['sync-node as v2', { v: 2, kind: 'sync-node', node: 'node-1' }],
    ['replace of a moved route with the instance found there (v2)', { ...create, v: 2, kind: 'replace', reason: 'moved', expect: { instanceId: 'i-0123abcd' } } as WorkMessage],
  ])('%s round-trips', (_name, message) => {
    const parsed = parseWorkMessage(JSON.stringify(message));
    expect(parsed).toEqual(message);
    expect(parseWorkMessage(serializeWorkMessage(parsed))).toEqual(message);
  });
});

describe('parseWorkMessage: rejected bodies', () => {
  it.each<[string, string, RegExp]>([
    ['not JSON', '{"v":1,', /not JSON/],
    ['empty body', '', /not JSON/],
    ['array', '[]', /want a JSON object/],
    ['null', 'null', /want a JSON object/],
    ['string', '"create"', /want a JSON object/],
    ['missing version', JSON.stringify({ ...create, v: undefined }), /unsupported version \(missing\)/],
    ['version 3', JSON.stringify({ ...create, v: 3 }), /unsupported version 3 \(want v: 1 or 2\)/],
    ['version 0', JSON.stringify({ ...create, v: 0 }), /unsupported version 0/],
    ['node-left as version 1 (new in 2)', JSON.stringify({ v: 1, kind: 'node-left', node: 'node-1' }), /kind node-left is new in version 2 \(got v: 1\)/],
    ['replace with expect as version 1 (new in 2)', JSON.stringify({ ...create, kind: 'replace', reason: 'moved', expect: { instanceId: I1 } }), /a replace's expect is new in version 2 \(got v: 1\)/],
    ['create with expect', JSON.stringify({ ...create, v: 2, expect: { instanceId: I1 } }), /expect/],
    ['node-left with route fields', JSON.stringify({ v: 2, kind: 'node-left', node: 'node-1', routeTableId: RTB }), /routeTableId/],
    ['node-left without node', JSON.stringify({ v: 2, kind: 'node-left' }), /node/],
    ['version as string', JSON.stringify({ ...create, v: '1' }), /unsupported version "1"/],
    ['unknown kind', JSON.stringify({ ...create, kind: 'upsert' }), /kind "upsert" is not one of create, replace, delete, sync-node, node-left/],
    ['missing kind', JSON.stringify({ ...create, kind: undefined }), /kind \(missing\)/],
    ['bad route table', JSON.stringify({ ...create, routeTableId: 'rtb-XYZ' }), /routeTableId: want a route table id/],
    ['route table too short', JSON.stringify({ ...create, routeTableId: 'rtb-0123abc' }), /routeTableId/],
    ['route table too long', JSON.stringify({ ...create, routeTableId: `rtb-${'a'.repeat(18)}` }), /routeTableId/],
    ['upper-case instance', JSON.stringify({ ...create, instanceId: 'i-0123456789ABCDEF0' }), /instanceId: want an instance id/],
    ['missing instance', JSON.stringify({ ...create, instanceId: undefined }), /instanceId/],
    ['eni target', JSON.stringify({ ...create, instanceId: 'eni-0123456789abcdef0' }), /instanceId/],
    ['not a CIDR', JSON.stringify({ ...create, destinationCidr: '10.0.1.0' }), /destinationCidr: "10.0.1.0" is not a CIDR/],
    ['host bits set', JSON.stringify({ ...create, destinationCidr: '10.0.1.7/24' }), /not canonical \(want 10.0.1.0\/24\)/],
    ['non-canonical IPv6', JSON.stringify({ ...create, destinationCidr: 'FD00:0001::/80' }), /not canonical \(want fd00:1::\/80\)/],
    ['delete with host bits', JSON.stringify({ v: 1, kind: 'delete', routeTableId: RTB, destinationCidr: '10.0.1.1/24', reason: 'blackhole' }), /invalid delete message: destinationCidr: .*not canonical/],
    ['delete without reason', JSON.stringify({ v: 1, kind: 'delete', routeTableId: RTB, destinationCidr: '10.0.1.0/24' }), /reason/],
    ['delete with moved', JSON.stringify({ v: 1, kind: 'delete', routeTableId: RTB, destinationCidr: '10.0.1.0/24', reason: 'moved' }), /reason/],
    ['create with no-owner', JSON.stringify({ ...create, reason: 'no-owner' }), /reason/],
    ['upper-case node', JSON.stringify({ ...create, node: 'Node-1' }), /node: want a Kubernetes node name/],
    ['node with underscore', JSON.stringify({ v: 1, kind: 'sync-node', node: 'node_1' }), /node/],
    ['node too long', JSON.stringify({ v: 1, kind: 'sync-node', node: 'a'.repeat(254) }), /at most 253/],
    ['empty node', JSON.stringify({ v: 1, kind: 'sync-node', node: '' }), /node/],
    ['unknown field', JSON.stringify({ ...create, extra: true }), /extra/],
    ['route fields on sync-node', JSON.stringify({ v: 1, kind: 'sync-node', node: 'n1', routeTableId: RTB }), /routeTableId/],
  ])('%s', (_name, body, message) => {
    const caught = thrownBy(() => parseWorkMessage(body));
    expect(caught).toBeInstanceOf(InvalidInputError);
    const error = caught as InvalidInputError;
    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(message);
    expect(error.message).not.toContain('\n');
  });

  it('keeps the JSON syntax error as the cause', () => {
    const error = thrownBy(() => parseWorkMessage('{')) as Error | undefined;
    expect(error?.cause).toBeInstanceOf(SyntaxError);
  });
});

describe('messageKey', () => {
  const replace = { ...create, kind: 'replace', reason: 'moved' } as WorkMessage;
  const del = { v: 1, kind: 'delete', routeTableId: RTB, destinationCidr: '10.0.1.0/24', reason: 'no-owner' } as WorkMessage;
  it.each<[string, WorkMessage, string]>([
    ['create', create as WorkMessage, `route|${RTB}|10.0.1.0/24|${I1}`],
    ['replace', replace, `route|${RTB}|10.0.1.0/24|${I1}`],
    ['delete', del, `delete|${RTB}|10.0.1.0/24`],
    ['sync-node', { v: 1, kind: 'sync-node', node: 'node-1' }, 'node|node-1'],
    ['node-left', { v: 2, kind: 'node-left', node: 'node-1' }, 'left|node-1'],
    ['create written as v2: the same work as v1', { ...create, v: 2 } as WorkMessage, `route|${RTB}|10.0.1.0/24|${I1}`],
  ])('%s', (_name, message, key) => {
    expect(messageKey(message)).toBe(key);
  });

  it.each<[string, WorkMessage, WorkMessage, boolean]>([
    ['create and replace of one target', create as WorkMessage, replace, true],
    ['create with and without reason', create as WorkMessage, { ...create, reason: 'moved' } as WorkMessage, true],
    ['other instance', create as WorkMessage, { ...create, instanceId: I2 } as WorkMessage, false],
    ['other table', create as WorkMessage, { ...create, routeTableId: RTB2 } as WorkMessage, false],
    ['other destination', create as WorkMessage, { ...create, destinationCidr: '10.0.2.0/24' } as WorkMessage, false],
    ['create vs delete of one destination', create as WorkMessage, del, false],
    ['node names differ', { v: 1, kind: 'sync-node', node: 'a' }, { v: 1, kind: 'sync-node', node: 'b' }, false],
    ['sync-node vs node-left of one node', { v: 1, kind: 'sync-node', node: 'a' }, { v: 2, kind: 'node-left', node: 'a' }, false],
  ])('%s -> same key: %s', (_name, a, b, same) => {
    expect(messageKey(a) === messageKey(b)).toBe(same);
  });
});

describe('toMessages', () => {
  const c0 = { routeTableId: RTB, destinationCidr: '10.0.1.0/24', node: 'n1', instanceId: I1 };
  const plan: PlannedRoutes = {
    create: [c0],
    replace: [{ routeTableId: RTB2, destinationCidr: 'fd00:1::/80', node: 'n2', instanceId: I2, reason: 'blackhole' }],
    delete: [
      { routeTableId: RTB, destinationCidr: '10.0.7.0/24', reason: 'no-owner' },
      { routeTableId: RTB2, destinationCidr: '10.0.8.0/24', reason: 'blackhole' },
    ],
  };

  it.each<[string, boolean, string[]]>([
    ['with deletes', false, ['create', 'replace', 'delete', 'delete']],
    ['withholding deletes', true, ['create', 'replace']],
  ])('%s', (_name, withholdDeletes, kinds) => {
    const messages = toMessages(plan, { withholdDeletes });
    expect(messages.map((m) => m.kind)).toEqual(kinds);
    for (const message of messages) {
      expect(parseWorkMessage(serializeWorkMessage(message))).toEqual(message);
    }
  });

  it('builds exact messages and drops extra plan fields', () => {
    const withExtra = {
      create: [{ ...c0, note: 'planner bookkeeping' } as PlannedRoutes['create'][number]],
      replace: plan.replace,
      delete: plan.delete.slice(0, 1),
    };
    expect(toMessages(withExtra, { withholdDeletes: false })).toEqual([
      { v: 1, kind: 'create', routeTableId: RTB, destinationCidr: '10.0.1.0/24', node: 'n1', instanceId: I1 },
      { v: 1, kind: 'replace', routeTableId: RTB2, destinationCidr: 'fd00:1::/80', node: 'n2', instanceId: I2, reason: 'blackhole' },
      { v: 1, kind: 'delete', routeTableId: RTB, destinationCidr: '10.0.7.0/24', reason: 'no-owner' },
    ]);
  });

  it.each<[string, PlannedRoutes]>([
    ['a non-canonical create', { create: [{ ...c0, destinationCidr: '10.0.1.1/24' }], replace: [], delete: [] }],
    ['a bad instance', { create: [{ ...c0, instanceId: 'i-zz' }], replace: [], delete: [] }],
    ['a bad delete', { create: [], replace: [], delete: [{ routeTableId: 'rtb-1', destinationCidr: '10.0.7.0/24', reason: 'no-owner' }] }],
  ])('rejects %s with InvalidInputError', (_name, bad) => {
    expect(() => toMessages(bad, { withholdDeletes: false })).toThrow(InvalidInputError);
  });

  it('withheld deletes are not validated either', () => {
    const bad: PlannedRoutes = { create: [], replace: [], delete: [{ routeTableId: 'nope', destinationCidr: 'x', reason: 'no-owner' }] };
    expect(toMessages(bad, { withholdDeletes: true })).toEqual([]);
  });

  it('syncNodeMessage validates the node name', () => {
    expect(syncNodeMessage('node-1')).toEqual({ v: 1, kind: 'sync-node', node: 'node-1' });
    expect(() => syncNodeMessage('Node_1')).toThrow(InvalidInputError);
  });

  it('nodeLeftMessage is version 2 and validates the node name', () => {
    expect(nodeLeftMessage('node-1')).toEqual({ v: 2, kind: 'node-left', node: 'node-1' });
    expect(() => nodeLeftMessage('Node_1')).toThrow(InvalidInputError);
  });

  it('toMessages still writes version 1, which a worker of the previous release accepts', () => {
    const plan: PlannedRoutes = {
      create: [{ routeTableId: RTB, destinationCidr: '10.0.1.0/24', node: 'n1', instanceId: I1 }],
      replace: [],
      delete: [{ routeTableId: RTB, destinationCidr: '10.0.9.0/24', reason: 'blackhole' }],
    };
    expect(toMessages(plan, { withholdDeletes: false }).map((m) => m.v)).toEqual([1, 1]);
  });
});

describe('dedupeMessages / MemoryWorkQueue', () => {
  const replace = { ...create, kind: 'replace', reason: 'moved' } as WorkMessage;
  const other = { ...create, destinationCidr: '10.0.2.0/24' } as WorkMessage;
  const node = { v: 1, kind: 'sync-node', node: 'n1' } as WorkMessage;

  it.each<[string, WorkMessage[], WorkMessage[], number]>([
    ['no duplicates', [create as WorkMessage, other, node], [create as WorkMessage, other, node], 0],
    ['exact repeat', [create as WorkMessage, other, create as WorkMessage], [create as WorkMessage, other], 1],
    ['replace wins over create, keeps position', [create as WorkMessage, other, replace], [replace, other], 1],
    ['create after replace is dropped', [replace, create as WorkMessage], [replace], 1],
    ['node syncs collapse', [node, node, node], [node], 2],
    ['empty', [], [], 0],
  ])('%s', async (_name, input, unique, duplicates) => {
    expect(dedupeMessages(input)).toEqual({ unique, duplicates });
    const queue = new MemoryWorkQueue();
    expect(await queue.send(input)).toEqual({ sent: unique.length, duplicates });
    expect(queue.sent).toEqual(unique);
  });
});
