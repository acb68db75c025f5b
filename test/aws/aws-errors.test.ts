/**
 * One classification for every AWS adapter (lib/aws/aws-errors.ts): the shared classifier pinned
 * on the shapes the SDK throws, each adapter's mapping pinned with a mocked client, and the
 * failure that matters most pinned over real HTTP: a connection that is reset on every attempt, so
 * the error surfaces after the SDK's own retries (with `$metadata` the retry middleware adds).
 */
import { createServer, type Server, type Socket } from 'node:net';
import { CreateRouteCommand, EC2Client, EC2ServiceException } from '@aws-sdk/client-ec2';
import { DescribeTableCommand, DynamoDBClient, DynamoDBServiceException, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, SQSClient, SQSServiceException, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { GetSecretValueCommand, SecretsManagerClient, SecretsManagerServiceException } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SQS_ERROR_CODES } from '../../lib/aws/aws-error-codes.ts';
import { classifyAwsError, isRetryableAwsError } from '../../lib/aws/aws-errors.ts';
import { DynamoDbClaimStore } from '../../lib/aws/dynamodb-cidr-store.ts';
import { Ec2RouteTables } from '../../lib/aws/ec2-route-tables.ts';
import { SqsWorkQueue } from '../../lib/aws/sqs-work-queue.ts';
import { AwsStackResources } from '../../lib/aws/stack-resources.ts';
import { secretsManagerWebhookSecrets } from '../../lib/aws/webhook-secrets.ts';
import { PodrouteError } from '../../lib/errors.ts';
import type { WorkMessage } from '../../lib/messages/work-message.ts';

const credentials = { accessKeyId: 'a', secretAccessKey: 'b' };
const SPEC = { routeTableId: 'rtb-1', destinationCidr: '10.244.1.0/24', networkInterfaceId: 'eni-1' };
const MESSAGE: WorkMessage = { v: 1, kind: 'sync-node', node: 'node-a' };

/** A socket error as Node's HTTP client throws it, after the SDK's retry middleware added its `$metadata`. */
const afterRetries = <T extends Error>(error: T): T => Object.assign(error, { $metadata: { attempts: 3, totalRetryDelay: 450 } });
const reset = () => afterRetries(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
const refused = () => afterRetries(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }));
const timeout = () => afterRetries(Object.assign(new Error('Connection timed out after 1000 ms'), { name: 'TimeoutError' }));
const aborted = () => Object.assign(new Error('Request aborted'), { name: 'AbortError' });
/** A service answer, shaped as every SDK service exception is. */
const answer = (name: string, status: number) => ({
  name,
  $fault: status >= 500 ? ('server' as const) : ('client' as const),
  $metadata: { httpStatusCode: status, requestId: 'r-1', attempts: 1, totalRetryDelay: 0 },
  message: `text that must not matter (${name})`,
});

describe('classifyAwsError: the SDK\'s own checks, for every client', () => {
  it.each([
    ['a connection reset after the SDK\'s retries', reset(), 'transport'],
    ['a refused connection after the SDK\'s retries', refused(), 'transport'],
    ['a socket timeout after the SDK\'s retries', timeout(), 'transport'],
    ['a reset wrapped as the cause of another error', new Error('send failed', { cause: reset() }), 'transport'],
    ['a call aborted at the deadline', aborted(), 'aborted'],
    ['EC2 RequestLimitExceeded', new EC2ServiceException(answer('RequestLimitExceeded', 503)), 'throttled'],
    ['DynamoDB ProvisionedThroughputExceededException', new DynamoDBServiceException(answer('ProvisionedThroughputExceededException', 400)), 'throttled'],
    ['SQS RequestThrottled', new SQSServiceException(answer('RequestThrottled', 403)), 'throttled'],
    ['an HTTP 429', new SQSServiceException(answer('TooMany', 429)), 'throttled'],
    ['EC2 InternalError (500)', new EC2ServiceException(answer('InternalError', 500)), 'server'],
    ['a 501', new DynamoDBServiceException(answer('NotImplemented', 501)), 'server'],
    ['EC2 UnauthorizedOperation', new EC2ServiceException(answer('UnauthorizedOperation', 403)), 'denied'],
    ['DynamoDB AccessDeniedException', new DynamoDBServiceException(answer('AccessDeniedException', 400)), 'denied'],
    ['Secrets Manager AccessDeniedException', new SecretsManagerServiceException(answer('AccessDeniedException', 400)), 'denied'],
    ['SQS AccessDenied', new SQSServiceException(answer('AccessDenied', 403)), 'denied'],
    ['a code no service table names, without one', new EC2ServiceException(answer('InvalidParameterValue', 400)), 'rejected'],
    ['a TypeError (a bug)', new TypeError('x is undefined'), 'rejected'],
    ['a string', 'boom', 'rejected'],
  ] as const)('%s is %s', (_what, error, kind) => {
    expect(classifyAwsError(error)).toBe(kind);
    expect(isRetryableAwsError(error)).toBe(kind === 'transport' || kind === 'throttled' || kind === 'server' || kind === 'aborted');
  });

  it('a code answered without the SDK\'s answer shape is no code: a plain Error named like one is a bug, not a service answer', () => {
    const named = Object.assign(new Error('x'), { name: 'QueueDoesNotExist' });
    expect(classifyAwsError(named, SQS_ERROR_CODES)).toBe('rejected');
  });
});

/** One service's error codes, each pinned to its kind and its retryability through the service's adapter (mocked client). */
describe('each service\'s own codes (lib/aws/aws-error-codes.ts), through its adapter', () => {
  const dynamo = mockClient(DynamoDBClient);
  const sqs = mockClient(SQSClient);
  const ec2 = mockClient(EC2Client);
  afterEach(() => {
    dynamo.reset();
    sqs.reset();
    ec2.reset();
  });
  afterAll(() => {
    dynamo.restore();
    sqs.restore();
    ec2.restore();
  });
  const kindOf = async (promise: Promise<unknown>) => {
    const error = await failureOf(promise);
    return { kind: (error as { kind?: unknown }).kind, retryable: error.retryable };
  };

  /** Each service's adapter call, its client answering `code` with the service's own exception. */
  const failingCall = {
    DynamoDB: (code: string, status: number) => {
      dynamo.on(GetItemCommand).rejects(new DynamoDBServiceException(answer(code, status)));
      return new DynamoDbClaimStore({ client: new DynamoDBClient({ region: 'us-east-1', credentials, maxAttempts: 1 }), tableName: 't', setId: '10.0.0.0/16@24' }).get('b#0000000001');
    },
    SQS: (code: string, status: number) => {
      sqs.on(SendMessageBatchCommand).rejects(new SQSServiceException(answer(code, status)));
      return new SqsWorkQueue(new SQSClient({ region: 'us-east-1', credentials, maxAttempts: 1 }), 'http://127.0.0.1/000000000000/q', { maxAttempts: 1 }).send([MESSAGE]);
    },
  };

  it.each([
    ['DynamoDB', 'ProvisionedThroughputExceededException', 400, 'throttled'],
    ['DynamoDB', 'ThrottlingException', 400, 'throttled'],
    ['DynamoDB', 'RequestLimitExceeded', 400, 'throttled'],
    ['DynamoDB', 'LimitExceededException', 400, 'throttled'],
    ['DynamoDB', 'InternalServerError', 500, 'server'],
    ['DynamoDB', 'ServiceUnavailable', 503, 'server'],
    ['DynamoDB', 'AccessDeniedException', 400, 'denied'],
    ['DynamoDB', 'ConditionalCheckFailedException', 400, 'conflict'],
    ['DynamoDB', 'ResourceInUseException', 400, 'conflict'],
    ['DynamoDB', 'ResourceNotFoundException', 400, 'not-found'],
    ['DynamoDB', 'ValidationException', 400, 'invalid'],
    ['DynamoDB', 'UnrecognizedClientException', 400, 'rejected'],
    ['SQS', 'RequestThrottled', 403, 'throttled'],
    ['SQS', 'KmsThrottled', 400, 'throttled'],
    ['SQS', 'InternalError', 500, 'server'],
    ['SQS', 'AccessDenied', 403, 'denied'],
    ['SQS', 'KmsAccessDenied', 400, 'denied'],
    ['SQS', 'QueueDoesNotExist', 400, 'not-found'],
    ['SQS', 'AWS.SimpleQueueService.NonExistentQueue', 400, 'not-found'],
    ['SQS', 'BatchEntryIdsNotDistinct', 400, 'invalid'],
    ['SQS', 'TooManyEntriesInBatchRequest', 400, 'invalid'],
    ['SQS', 'InvalidAttributeName', 400, 'invalid'],
    ['SQS', 'KmsDisabled', 400, 'rejected'],
  ] as const)('%s %s (HTTP %i) is %s', async (service, code, status, kind) => {
    expect(await kindOf(failingCall[service](code, status))).toEqual({ kind, retryable: kind === 'throttled' || kind === 'server' });
  });

  it.each([
    ['RequestLimitExceeded', 503, 'throttled', 'Ec2Error'],
    ['InternalError', 500, 'server', 'Ec2Error'],
    ['Unavailable', 503, 'server', 'Ec2Error'],
    ['UnauthorizedOperation', 403, 'denied', 'Ec2Error'],
    ['RouteLimitExceeded', 400, undefined, 'RouteTableFullError'],
    ['PrivateIpAddressLimitExceeded', 400, 'quota', 'Ec2Error'],
    ['InvalidRouteTableID.NotFound', 400, 'not-found', 'Ec2NotFoundError'],
    ['InvalidParameterValue', 400, 'invalid', 'Ec2Error'],
    ['InvalidRouteTableId.Malformed', 400, 'invalid', 'Ec2Error'],
    ['IncorrectState', 400, 'rejected', 'Ec2Error'],
  ] as const)('EC2 %s (HTTP %i) is %s, a %s', async (code, status, kind, name) => {
    ec2.on(CreateRouteCommand).rejects(new EC2ServiceException(answer(code, status)));
    const tables = new Ec2RouteTables(new EC2Client({ region: 'us-east-1', credentials, maxAttempts: 1 }), { clusterName: 'alpha' });
    const error = await failureOf(tables.createRoute(SPEC));
    expect(error.name).toBe(name);
    expect({ kind: (error as { kind?: unknown }).kind, retryable: error.retryable }).toEqual({ kind, retryable: kind === 'throttled' || kind === 'server' });
  });

  it.each([
    ['ResourceNotFoundException', 400, false],
    ['InvalidRequestException', 400, false],
    ['InternalServiceError', 500, true],
  ] as const)('Secrets Manager %s on AWSCURRENT (HTTP %i): retryable %s', async (code, status, retryable) => {
    const secrets = mockClient(SecretsManagerClient);
    try {
      secrets.on(GetSecretValueCommand).rejects(new SecretsManagerServiceException(answer(code, status)));
      const error = await failureOf(secretsManagerWebhookSecrets(new SecretsManagerClient({ region: 'us-east-1', credentials, maxAttempts: 1 }), 'podroute/token'));
      expect(error.retryable).toBe(retryable);
    } finally {
      secrets.restore();
    }
  });

  it.each([
    ['QueueDoesNotExist', { exists: false }],
    ['AWS.SimpleQueueService.NonExistentQueue', { exists: false }],
  ] as const)('doctor: SQS %s is a missing queue', async (code, expected) => {
    sqs.on(GetQueueAttributesCommand).rejects(new SQSServiceException(answer(code, 400)));
    const resources = new AwsStackResources({ sqs: new SQSClient({ region: 'us-east-1', credentials, maxAttempts: 1 }), dynamodb: new DynamoDBClient({ region: 'us-east-1', credentials, maxAttempts: 1 }) });
    expect(await resources.queue('http://127.0.0.1/000000000000/q')).toMatchObject(expected);
  });

  it('doctor: DynamoDB ResourceNotFoundException is a missing table; throttling is thrown', async () => {
    const resources = new AwsStackResources({ sqs: new SQSClient({ region: 'us-east-1', credentials, maxAttempts: 1 }), dynamodb: new DynamoDBClient({ region: 'us-east-1', credentials, maxAttempts: 1 }) });
    dynamo.on(DescribeTableCommand).rejectsOnce(new DynamoDBServiceException(answer('ResourceNotFoundException', 400)));
    expect(await resources.table('t')).toMatchObject({ exists: false });
    const throttled = new DynamoDBServiceException(answer('ThrottlingException', 400));
    dynamo.on(DescribeTableCommand).rejects(throttled);
    await expect(resources.table('t')).rejects.toBe(throttled);
  });
});

interface Stub {
  fail(error: Error): void;
  reset(): void;
  restore(): void;
}
const stubbed = <M extends { reset(): unknown; restore(): unknown }>(mock: M, fail: (mock: M, error: Error) => unknown): Stub => ({
  fail: (error) => void fail(mock, error),
  reset: () => void mock.reset(),
  restore: () => void mock.restore(),
});

/** Each adapter's call, and the service's own names for throttling and for a refused permission. */
const adapters = [
  {
    name: 'EC2 (Ec2RouteTables.createRoute)',
    throttled: () => new EC2ServiceException(answer('RequestLimitExceeded', 503)),
    denied: () => new EC2ServiceException(answer('UnauthorizedOperation', 403)),
    mock: () => stubbed(mockClient(EC2Client), (m, error) => m.on(CreateRouteCommand).rejects(error)),
    call: (client: unknown) => new Ec2RouteTables(client as EC2Client, { clusterName: 'alpha' }).createRoute(SPEC),
    client: (endpoint?: string) => new EC2Client({ region: 'us-east-1', credentials, maxAttempts: 2, ...(endpoint ? { endpoint } : {}) }),
  },
  {
    name: 'DynamoDB (DynamoDbClaimStore.get)',
    throttled: () => new DynamoDBServiceException(answer('ThrottlingException', 400)),
    denied: () => new DynamoDBServiceException(answer('AccessDeniedException', 400)),
    mock: () => stubbed(mockClient(DynamoDBClient), (m, error) => m.on(GetItemCommand).rejects(error)),
    call: (client: unknown) => new DynamoDbClaimStore({ client: client as DynamoDBClient, tableName: 't', setId: '10.0.0.0/16@24' }).get('b#0000000001'),
    client: (endpoint?: string) => new DynamoDBClient({ region: 'us-east-1', credentials, maxAttempts: 2, ...(endpoint ? { endpoint } : {}) }),
  },
  {
    name: 'SQS (SqsWorkQueue.send)',
    throttled: () => new SQSServiceException(answer('RequestThrottled', 403)),
    denied: () => new SQSServiceException(answer('AccessDenied', 403)),
    mock: () => stubbed(mockClient(SQSClient), (m, error) => m.on(SendMessageBatchCommand).rejects(error)),
    call: (client: unknown) => new SqsWorkQueue(client as SQSClient, 'http://127.0.0.1/000000000000/q', { maxAttempts: 1 }).send([MESSAGE]),
    client: (endpoint?: string) => new SQSClient({ region: 'us-east-1', credentials, maxAttempts: 2, ...(endpoint ? { endpoint } : {}) }),
  },
  {
    name: 'Secrets Manager (secretsManagerWebhookSecrets)',
    throttled: () => new SecretsManagerServiceException(answer('ThrottlingException', 400)),
    denied: () => new SecretsManagerServiceException(answer('AccessDeniedException', 400)),
    mock: () => stubbed(mockClient(SecretsManagerClient), (m, error) => m.on(GetSecretValueCommand).rejects(error)),
    call: (client: unknown) => secretsManagerWebhookSecrets(client as SecretsManagerClient, 'podroute/token'),
    client: (endpoint?: string) => new SecretsManagerClient({ region: 'us-east-1', credentials, maxAttempts: 2, ...(endpoint ? { endpoint } : {}) }),
  },
];

async function failureOf(promise: Promise<unknown>): Promise<PodrouteError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PodrouteError);
  return error as PodrouteError;
}

describe.each(adapters)('$name maps failures by the shared classification (mocked client)', (adapter) => {
  let mock: Stub;
  beforeAll(() => {
    mock = adapter.mock();
  });
  afterEach(() => mock.reset());
  // The stub sits on the client class's prototype; test files share a worker (vitest.config.ts).
  afterAll(() => mock.restore());

  it.each([
    ['a connection reset after the SDK\'s retries', reset, true],
    ['a socket timeout after the SDK\'s retries', timeout, true],
    ['throttling', 'throttled', true],
    ['a refused permission', 'denied', false],
  ] as const)('%s -> retryable %s, with the cause', async (_what, make, retryable) => {
    const cause = typeof make === 'function' ? make() : adapter[make]();
    mock.fail(cause);
    const error = await failureOf(adapter.call(adapter.client()));
    expect(error.retryable).toBe(retryable);
    expect(error.cause).toBe(cause);
  });
});

describe('a connection reset on every attempt, over real HTTP', () => {
  let server: Server;
  let endpoint = '';
  const sockets = new Set<Socket>();
  let connections = 0;
  beforeAll(async () => {
    // Reads the request's first bytes, then resets the connection (RST, not FIN): the client sees ECONNRESET.
    server = createServer((socket) => {
      connections += 1;
      sockets.add(socket);
      socket.once('data', () => socket.resetAndDestroy());
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    endpoint = typeof address === 'object' && address !== null ? `http://127.0.0.1:${address.port}` : '';
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it.each(adapters)('$name: retryable once the SDK gives up, and the SDK did retry', async (adapter) => {
    const before = connections;
    const error = await failureOf(adapter.call(adapter.client(endpoint)));
    expect(error.retryable).toBe(true);
    // The SDK's own retry ran first (maxAttempts 2): this is the error that survives it.
    expect(connections - before).toBeGreaterThanOrEqual(2);
  });
});
