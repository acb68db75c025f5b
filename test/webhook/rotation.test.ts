/**
 * Secret rotation: while the previous secret is known, a token or a signature made with it is
 * accepted as well as one made with the current secret; any other secret is refused. The webhook
 * reads the pair from Secrets Manager (AWSCURRENT, AWSPREVIOUS) or SSM (latest version and N-1)
 * and caches it for WEBHOOK_SECRET_TTL_MS of the injected clock.
 */
import { GetSecretValueCommand, ResourceNotFoundException, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { GetParameterCommand, ParameterVersionNotFound, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { WEBHOOK_SECRET_TTL_MS, cachedFor } from '../../functions/wiring.ts';
import { secretsManagerWebhookSecrets, ssmWebhookSecrets } from '../../lib/aws/webhook-secrets.ts';
import { classifyRequest } from '../../lib/webhook/request.ts';
import { NOW_SECONDS, event, review, signed, withToken } from './fixtures.ts';

// A client class's send is stubbed on its prototype, and test files share a worker
// (vitest.config.ts): every stub is restored after its test, also when the test fails.
const stubs: Array<{ restore(): void }> = [];
function stubbed<T extends { restore(): void }>(stub: T): T {
  stubs.push(stub);
  return stub;
}
afterEach(() => {
  for (const stub of stubs.splice(0)) stub.restore();
});

const CURRENT = 'current-secret-6f1e0c9b8a7d4e2f';
const PREVIOUS = 'previous-secret-3a5c7e9b1d2f4a6c';
const OTHER = 'older-secret-0b2d4f6a8c1e3a5c';
const KEY = 'current-key-9d8c7b6a5f4e3d2c';
const PREVIOUS_KEY = 'previous-key-1a2b3c4d5e6f7a8b';
const rotating = { secret: CURRENT, previousSecret: PREVIOUS, signingKey: KEY, previousSigningKey: PREVIOUS_KEY, now: () => NOW_SECONDS * 1000 };

describe('classifyRequest during a rotation', () => {
  it.each([
    ['current', CURRENT, 'admission'],
    ['previous', PREVIOUS, 'admission'],
    ['an older third', OTHER, 'rejected'],
  ])('token with the %s secret: %s', (_label, token, kind) => {
    expect(classifyRequest(withToken(review('CREATE'), { pathParameters: { token } }), rotating).kind).toBe(kind);
    expect(classifyRequest(withToken(review('CREATE'), { pathParameters: undefined, headers: { authorization: `Bearer ${token}` } }), rotating).kind).toBe(kind);
  });

  it.each([
    ['current', KEY, 'event'],
    ['previous', PREVIOUS_KEY, 'event'],
    ['an older third', OTHER, 'rejected'],
    ['current token\'s', CURRENT, 'rejected'],
  ])('signature with the %s signing key: %s', (_label, secret, kind) => {
    expect(classifyRequest(signed(event('NodeJoined'), { secret }), rotating).kind).toBe(kind);
  });

  it('refuses the previous secret once there is none (rotation over)', () => {
    const done = { ...rotating, previousSecret: null, previousSigningKey: null };
    expect(classifyRequest(withToken(review('CREATE'), { pathParameters: { token: PREVIOUS } }), done)).toEqual({ kind: 'rejected', status: 401, message: 'unauthorized' });
    expect(classifyRequest(signed(event('NodeJoined'), { secret: PREVIOUS_KEY }), done).kind).toBe('rejected');
  });

  it('fails a request whose copies of the token name different secrets, even both valid ones', () => {
    const request = withToken(review('CREATE'), { pathParameters: { token: CURRENT }, headers: { authorization: `Bearer ${OTHER}` } });
    expect(classifyRequest(request, rotating).kind).toBe('rejected');
  });
});

describe('cachedFor (the webhook secret cache)', () => {
  it('reads once per TTL of the injected clock, again after expiry', async () => {
    let clock = 1_000_000;
    let reads = 0;
    const values = ['v1', 'v2'];
    const get = cachedFor(async () => values[reads++] ?? 'none', WEBHOOK_SECRET_TTL_MS, () => clock);
    expect(await get()).toBe('v1');
    clock += WEBHOOK_SECRET_TTL_MS - 1;
    expect(await get()).toBe('v1');
    expect(reads).toBe(1);
    clock += 1;
    expect(await get()).toBe('v2');
    expect(reads).toBe(2);
  });

  it('shares one read between concurrent callers', async () => {
    let reads = 0;
    const get = cachedFor(async () => `v${++reads}`, 1000, () => 0);
    expect(await Promise.all([get(), get(), get()])).toEqual(['v1', 'v1', 'v1']);
    expect(reads).toBe(1);
  });

  it('keeps the last good value when a refresh fails, and rejects when there is none', async () => {
    let clock = 0;
    let fail = true;
    const get = cachedFor(async () => {
      if (fail) throw new Error('store unreachable');
      return 'good';
    }, 1000, () => clock);
    await expect(get()).rejects.toThrow('store unreachable');
    fail = false;
    expect(await get()).toBe('good');
    clock += 5000;
    fail = true;
    expect(await get()).toBe('good');
    fail = false;
    clock += 1;
    expect(await get()).toBe('good');
  });

  it('is five minutes', () => {
    expect(WEBHOOK_SECRET_TTL_MS).toBe(300_000);
  });
});

describe('reading the current and previous secret', () => {
  it('Secrets Manager: AWSCURRENT and AWSPREVIOUS', async () => {
    const sm = stubbed(mockClient(SecretsManagerClient));
    sm.on(GetSecretValueCommand, { SecretId: 'hook', VersionStage: 'AWSCURRENT' }).resolves({ SecretString: CURRENT });
    sm.on(GetSecretValueCommand, { SecretId: 'hook', VersionStage: 'AWSPREVIOUS' }).resolves({ SecretString: PREVIOUS });
    expect(await secretsManagerWebhookSecrets(new SecretsManagerClient({}), 'hook')).toEqual({ current: CURRENT, previous: PREVIOUS });
  });

  it('Secrets Manager: a never-rotated secret has no previous version', async () => {
    const sm = stubbed(mockClient(SecretsManagerClient));
    sm.on(GetSecretValueCommand, { VersionStage: 'AWSCURRENT' }).resolves({ SecretString: CURRENT });
    sm.on(GetSecretValueCommand, { VersionStage: 'AWSPREVIOUS' }).rejects(
      new ResourceNotFoundException({ message: "Secrets Manager can't find the specified secret value for staging label: AWSPREVIOUS", $metadata: {} }),
    );
    expect(await secretsManagerWebhookSecrets(new SecretsManagerClient({}), 'hook')).toEqual({ current: CURRENT, previous: null });
  });

  it.each([
    ['throttling: retryable', 'ThrottlingException', true],
    ['a refused permission: not retryable (lib/aws/aws-errors.ts)', 'AccessDeniedException', false],
  ])('Secrets Manager: another failure is an error, not a missing previous secret (%s)', async (_what, name, retryable) => {
    const sm = stubbed(mockClient(SecretsManagerClient));
    sm.on(GetSecretValueCommand, { VersionStage: 'AWSCURRENT' }).resolves({ SecretString: CURRENT });
    const failure = Object.assign(new Error('refused'), { name, $fault: 'client', $metadata: { httpStatusCode: 400 } });
    sm.on(GetSecretValueCommand, { VersionStage: 'AWSPREVIOUS' }).rejects(failure);
    await expect(secretsManagerWebhookSecrets(new SecretsManagerClient({}), 'hook')).rejects.toMatchObject({ retryable });
  });

  it('SSM: the latest version and version N-1 by selector', async () => {
    const ssm = stubbed(mockClient(SSMClient));
    ssm.on(GetParameterCommand, { Name: '/podroute/hook' }).resolves({ Parameter: { Value: CURRENT, Version: 4 } });
    ssm.on(GetParameterCommand, { Name: '/podroute/hook:3' }).resolves({ Parameter: { Value: PREVIOUS, Version: 3 } });
    expect(await ssmWebhookSecrets(new SSMClient({}), '/podroute/hook')).toEqual({ current: CURRENT, previous: PREVIOUS });
    expect(ssm.commandCalls(GetParameterCommand).map((call) => call.args[0].input)).toEqual([
      { Name: '/podroute/hook', WithDecryption: true },
      { Name: '/podroute/hook:3', WithDecryption: true },
    ]);
  });

  it('SSM: version 1, or a pruned N-1, has no previous secret', async () => {
    const ssm = stubbed(mockClient(SSMClient));
    ssm.on(GetParameterCommand, { Name: 'hook' }).resolves({ Parameter: { Value: CURRENT, Version: 1 } });
    expect(await ssmWebhookSecrets(new SSMClient({}), 'hook')).toEqual({ current: CURRENT, previous: null });
    ssm.on(GetParameterCommand, { Name: 'hook' }).resolves({ Parameter: { Value: CURRENT, Version: 9 } });
    ssm.on(GetParameterCommand, { Name: 'hook:8' }).rejects(new ParameterVersionNotFound({ message: 'not found', $metadata: {} }));
    expect(await ssmWebhookSecrets(new SSMClient({}), 'hook')).toEqual({ current: CURRENT, previous: null });
  });
});
