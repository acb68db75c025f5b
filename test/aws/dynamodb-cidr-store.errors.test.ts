import {
  ConditionalCheckFailedException,
  DeleteItemCommand,
  DynamoDBClient,
  DynamoDBServiceException,
  GetItemCommand,
  InternalServerError,
  ProvisionedThroughputExceededException,
  PutItemCommand,
  QueryCommand,
  RequestLimitExceeded,
  ThrottlingException,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { DynamoDbCidrStore, DynamoDbClaimStore, type ConditionalWrite } from '../../lib/aws/dynamodb-cidr-store.ts';
import { dynamoDbError, isConditionalCheckFailed } from '../../lib/aws/dynamodb-errors.ts';
import { PodrouteError } from '../../lib/errors.ts';

const metadata = (httpStatusCode: number) => ({ httpStatusCode, requestId: 'r-1', attempts: 1, totalRetryDelay: 0 });

function serviceError(name: string, status: number): DynamoDBServiceException {
  return new DynamoDBServiceException({
    name,
    message: `${name} happened`,
    $fault: status >= 500 ? 'server' : 'client',
    $metadata: metadata(status),
  });
}

const cases: Array<[string, () => Error, boolean]> = [
  ['ProvisionedThroughputExceededException', () => new ProvisionedThroughputExceededException({ message: 'slow down', $metadata: metadata(400) }), true],
  ['ThrottlingException', () => new ThrottlingException({ message: 'slow down', $metadata: metadata(400) }), true],
  ['RequestLimitExceeded', () => new RequestLimitExceeded({ message: 'slow down', $metadata: metadata(400) }), true],
  ['InternalServerError', () => new InternalServerError({ message: 'oops', $metadata: metadata(500) }), true],
  ['ServiceUnavailable (503)', () => serviceError('ServiceUnavailable', 503), true],
  ['AccessDeniedException', () => serviceError('AccessDeniedException', 400), false],
  ['ResourceNotFoundException', () => serviceError('ResourceNotFoundException', 400), false],
  ['ValidationException', () => serviceError('ValidationException', 400), false],
  ['a connection reset', () => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }), true],
];

const mock = mockClient(DynamoDBClient);
// The stub sits on the client class's prototype, and test files share a worker (vitest.config.ts):
// every later file's clients of that class would get it too.
afterAll(() => mock.restore());
afterEach(() => {
  mock.reset();
});

const options = (onConditionalFailure?: (write: ConditionalWrite) => void) => ({
  client: new DynamoDBClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }),
  tableName: 't',
  setId: '10.0.0.0/16@24',
  ...(onConditionalFailure === undefined ? {} : { onConditionalFailure }),
});

function store(onConditionalFailure?: (write: ConditionalWrite) => void): DynamoDbCidrStore {
  return new DynamoDbCidrStore({ ...options(onConditionalFailure), clock: () => 0 });
}

function primitives(onConditionalFailure?: (write: ConditionalWrite) => void): DynamoDbClaimStore {
  return new DynamoDbClaimStore(options(onConditionalFailure));
}

describe('SDK errors become PodrouteErrors by name and status', () => {
  it.each(cases)('%s -> retryable %s, cause kept', async (_name, make, retryable) => {
    const error = make();
    mock.on(GetItemCommand).rejects(error);
    const caught: unknown = await store().findOwned('n1').catch((thrown: unknown) => thrown);
    expect(caught).toBeInstanceOf(PodrouteError);
    expect(caught).toMatchObject({ retryable, cause: error });
  });

  it.each(cases)('%s on a conditional write (putIfAbsent) -> retryable %s', async (_name, make, retryable) => {
    const error = make();
    mock.on(PutItemCommand).rejects(error);
    const caught: unknown = await primitives().putIfAbsent('b#0000000003', { since: 0 }).catch((thrown: unknown) => thrown);
    expect(caught).toBeInstanceOf(PodrouteError);
    expect(caught).toMatchObject({ retryable, cause: error });
  });

  it('on a Query, paging included', async () => {
    const throttled = new ThrottlingException({ message: 'slow down', $metadata: metadata(400) });
    mock
      .on(QueryCommand)
      .resolvesOnce({ Count: 5, LastEvaluatedKey: { pk: { S: 'p' }, sk: { S: 'b#0000000004' } } })
      .rejectsOnce(throttled);
    const caught: unknown = await store().usedCount().catch((thrown: unknown) => thrown);
    expect(caught).toMatchObject({ retryable: true, cause: throttled });
    expect(mock.commandCalls(QueryCommand)).toHaveLength(2);
  });

  it('the message names the action and the error, never parses it', () => {
    const error = serviceError('AccessDeniedException', 400);
    const mapped = dynamoDbError('PutItem', error);
    expect(mapped.message).toBe('DynamoDB PutItem failed (AccessDeniedException)');
    expect(mapped.cause).toBe(error);
    // The name decides, not the text.
    expect(isConditionalCheckFailed(Object.assign(new Error('ConditionalCheckFailedException'), { name: 'Other' }))).toBe(false);
  });
});

describe('a failed condition is control flow, not an error', () => {
  const failed = () => new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: metadata(400) });

  it('putIfAbsent: a false condition answers false and is counted by item kind', async () => {
    const seen: ConditionalWrite[] = [];
    mock.on(PutItemCommand).rejects(failed());
    await expect(primitives((write) => seen.push(write)).putIfAbsent('b#0000000007', { owner: 'n1', since: 5 })).resolves.toBe(false);
    expect(mock.commandCalls(PutItemCommand)[0]?.args[0].input).toMatchObject({
      Item: { pk: { S: 'set#10.0.0.0/16@24' }, sk: { S: 'b#0000000007' }, owner: { S: 'n1' }, since: { N: '5' }, ver: { N: '1' } },
      ConditionExpression: 'attribute_not_exists(pk)',
    });
    expect(seen).toEqual(['block']);
  });

  it('putIfVersion and deleteIf are conditional on the version; version 0 means an item without one', async () => {
    const seen: ConditionalWrite[] = [];
    mock.on(PutItemCommand).rejects(failed());
    mock.on(DeleteItemCommand).rejects(failed());
    const s = primitives((write) => seen.push(write));
    await expect(s.putIfVersion('o#n1', { index: 3, since: 0 }, 4)).resolves.toBe(false);
    await expect(s.deleteIf('o#n1', 0)).resolves.toBe(false);
    expect(mock.commandCalls(PutItemCommand)[0]?.args[0].input).toMatchObject({
      Item: { sk: { S: 'o#n1' }, index: { N: '3' }, ver: { N: '5' } },
      ConditionExpression: '#ver = :ver',
      ExpressionAttributeValues: { ':ver': { N: '4' } },
    });
    expect(mock.commandCalls(DeleteItemCommand)[0]?.args[0].input).toMatchObject({
      ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(#ver)',
    });
    expect(seen).toEqual(['owner', 'owner']);
  });

  it('increment is one UpdateItem ADD that returns the new value (UPDATED_NEW)', async () => {
    mock.on(UpdateItemCommand).resolves({ Attributes: { pos: { N: '42' } } });
    await expect(primitives().increment('cursor', 'pos', 3)).resolves.toBe(42);
    expect(mock.commandCalls(UpdateItemCommand)[0]?.args[0].input).toMatchObject({
      Key: { sk: { S: 'cursor' } },
      UpdateExpression: 'ADD #attr :by',
      ExpressionAttributeNames: { '#attr': 'pos' },
      ExpressionAttributeValues: { ':by': { N: '3' } },
      ReturnValues: 'UPDATED_NEW',
    });
  });

  it('release with an owner: a block changed since it was listed is skipped, not an error', async () => {
    const seen: ConditionalWrite[] = [];
    mock.on(QueryCommand).resolves({ Items: [{ sk: { S: 'b#0000000002' }, since: { N: '1' }, ver: { N: '1' } }] });
    mock.on(DeleteItemCommand).rejects(failed());
    mock.on(GetItemCommand).resolves({ Item: { sk: { S: 'b#0000000002' }, owner: { S: 'n2' }, ver: { N: '2' } } });
    await expect(store((write) => seen.push(write)).release(0, 5, 'n1')).resolves.toBeUndefined();
    expect(seen).toEqual(['block']);
  });
});

describe('items that do not fit the layout', () => {
  it('a block key that is not b#<10 digits> is a non-retryable error', async () => {
    mock.on(QueryCommand).resolves({ Items: [{ sk: { S: 'b#12' } }] });
    await expect(store().leases()).rejects.toMatchObject({ retryable: false });
  });
});
