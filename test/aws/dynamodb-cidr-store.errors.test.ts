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
import { afterEach, describe, expect, it } from 'vitest';
import { DynamoDbCidrStore, type ConditionalWrite } from '../../lib/aws/dynamodb-cidr-store.ts';
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
  ['a network error', () => Object.assign(new Error('socket hang up'), { name: 'ECONNRESET' }), false],
];

const mock = mockClient(DynamoDBClient);
afterEach(() => {
  mock.reset();
});

function store(onConditionalFailure?: (write: ConditionalWrite) => void): DynamoDbCidrStore {
  return new DynamoDbCidrStore({
    client: new DynamoDBClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }),
    tableName: 't',
    setId: '10.0.0.0/16@24',
    clock: () => 0,
    ...(onConditionalFailure === undefined ? {} : { onConditionalFailure }),
  });
}

describe('SDK errors become PodrouteErrors by name and status', () => {
  it.each(cases)('%s -> retryable %s, cause kept', async (_name, make, retryable) => {
    const error = make();
    mock.on(GetItemCommand).rejects(error);
    const caught: unknown = await store().findOwned('n1').catch((thrown: unknown) => thrown);
    expect(caught).toBeInstanceOf(PodrouteError);
    expect(caught).toMatchObject({ retryable, cause: error });
  });

  it.each(cases)('%s on a conditional write (claim) -> retryable %s', async (_name, make, retryable) => {
    const error = make();
    mock.on(UpdateItemCommand).rejects(error);
    const caught: unknown = await store().claim(3, null).catch((thrown: unknown) => thrown);
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

  it('claim without an owner answers taken', async () => {
    const seen: ConditionalWrite[] = [];
    mock.on(UpdateItemCommand).rejects(failed());
    await expect(store((write) => seen.push(write)).claim(7, null)).resolves.toEqual({ kind: 'taken' });
    expect(seen).toEqual(['block']);
  });

  it('claim for an owner whose block is taken: the record it wrote is deleted again', async () => {
    mock.on(PutItemCommand).resolves({});
    mock.on(UpdateItemCommand).rejects(failed());
    mock.on(DeleteItemCommand).resolves({});
    await expect(store().claim(7, 'n1')).resolves.toEqual({ kind: 'taken' });
    const deletes = mock.commandCalls(DeleteItemCommand);
    expect(deletes).toHaveLength(1);
    expect(deletes[0]?.args[0].input).toMatchObject({
      Key: { pk: { S: 'set#10.0.0.0/16@24' }, sk: { S: 'o#n1' } },
      ConditionExpression: 'tok = :tok',
    });
  });

  it('release with an owner: a block of another owner is "not ours", not an error', async () => {
    const seen: ConditionalWrite[] = [];
    mock.on(QueryCommand).resolves({ Items: [{ sk: { S: 'b#0000000002' }, since: { N: '1' } }] });
    mock.on(DeleteItemCommand).rejects(failed());
    await expect(store((write) => seen.push(write)).release(0, 5, 'n1')).resolves.toBeUndefined();
    expect(seen).toEqual(['release']);
  });

  it('a late cursor write is dropped quietly', async () => {
    const seen: ConditionalWrite[] = [];
    mock.on(GetItemCommand).resolves({ Item: { pos: { N: '9' }, total: { N: '8' } } });
    mock.on(UpdateItemCommand).rejects(failed());
    const s = store((write) => seen.push(write));
    expect(await s.readCursor()).toBe(1);
    await expect(s.writeCursor(0)).resolves.toBeUndefined();
    expect(mock.commandCalls(UpdateItemCommand)[0]?.args[0].input).toMatchObject({
      ConditionExpression: 'attribute_not_exists(pos) OR pos < :pos',
      ExpressionAttributeValues: { ':pos': { N: '16' }, ':total': { N: '8' } },
    });
    expect(seen).toEqual(['cursor']);
  });
});

describe('items that do not fit the layout', () => {
  it('a block key that is not b#<10 digits> is a non-retryable error', async () => {
    mock.on(QueryCommand).resolves({ Items: [{ sk: { S: 'b#12' } }] });
    await expect(store().leases()).rejects.toMatchObject({ retryable: false });
  });
});
