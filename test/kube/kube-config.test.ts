import type { RequestOptions } from 'node:https';
import { rootCertificates } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKubeEmulator, type KubeEmulator } from '../../infra/local/kube/index.ts';
import { createEksToken, EksTokenProvider } from '../../lib/aws/eks-token.ts';
import { KUBE_SECRET_TTL_MS, createKubeConfig } from '../../lib/kube/kube-config.ts';
import { KubeApiError, KubeNodes } from '../../lib/kube/kube-nodes.ts';
import { InvalidInputError } from '../../lib/errors.ts';

const credentials = async () => ({ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', sessionToken: 'session-token' });

function decode(token: string): URL {
  expect(token.startsWith('k8s-aws-v1.')).toBe(true);
  const payload = token.slice('k8s-aws-v1.'.length);
  expect(payload).toMatch(/^[A-Za-z0-9_-]+$/); // base64url, no padding
  return new URL(Buffer.from(payload, 'base64url').toString('utf8'));
}

describe('EKS token', () => {
  it('is a presigned STS GetCallerIdentity URL with the cluster id header signed in', async () => {
    const now = new Date('2026-05-06T07:08:09Z');
    const { token, expiresAt } = await createEksToken({ clusterName: 'prod-a', region: 'eu-west-1', credentials, now });
    const url = decode(token);
    expect(url.origin).toBe('https://sts.eu-west-1.amazonaws.com');
    const q = url.searchParams;
    expect(q.get('Action')).toBe('GetCallerIdentity');
    expect(q.get('Version')).toBe('2011-06-15');
    expect(q.get('X-Amz-Algorithm')).toBe('AWS4-HMAC-SHA256');
    expect(q.get('X-Amz-Credential')).toBe('AKIDEXAMPLE/20260506/eu-west-1/sts/aws4_request');
    expect(q.get('X-Amz-Date')).toBe('20260506T070809Z');
    expect(q.get('X-Amz-Expires')).toBe('60');
    expect(q.get('X-Amz-Security-Token')).toBe('session-token');
    expect(q.get('X-Amz-SignedHeaders')?.split(';')).toEqual(['host', 'x-k8s-aws-id']);
    expect(q.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);
    expect(q.has('x-k8s-aws-id')).toBe(false); // a signed header, not a query parameter
    expect(expiresAt.toISOString()).toBe('2026-05-06T07:23:09.000Z');

    const again = await createEksToken({ clusterName: 'prod-a', region: 'eu-west-1', credentials, now });
    expect(again.token).toBe(token);
    const other = await createEksToken({ clusterName: 'prod-b', region: 'eu-west-1', credentials, now });
    expect(decode(other.token).searchParams.get('X-Amz-Signature')).not.toBe(q.get('X-Amz-Signature'));
  });

  // Each partition has its own DNS suffix (the SDK's partition data: @aws-sdk/core's util-endpoints
  // partitions, `dnsSuffix` by `regionRegex`); aws-iam-authenticator signs for the regional STS host.
  it.each([
    ['eu-west-1', 'https://sts.eu-west-1.amazonaws.com'],
    ['us-gov-west-1', 'https://sts.us-gov-west-1.amazonaws.com'],
    ['cn-north-1', 'https://sts.cn-north-1.amazonaws.com.cn'],
    ['cn-northwest-1', 'https://sts.cn-northwest-1.amazonaws.com.cn'],
    ['us-iso-east-1', 'https://sts.us-iso-east-1.c2s.ic.gov'],
    ['us-isob-east-1', 'https://sts.us-isob-east-1.sc2s.sgov.gov'],
    ['eu-isoe-west-1', 'https://sts.eu-isoe-west-1.cloud.adc-e.uk'],
    ['us-isof-south-1', 'https://sts.us-isof-south-1.csp.hci.ic.gov'],
    ['eusc-de-east-1', 'https://sts.eusc-de-east-1.amazonaws.eu'],
  ])('is signed for the STS host of the region\'s partition: %s', async (region, origin) => {
    const { token } = await createEksToken({ clusterName: 'prod-a', region, credentials, now: new Date('2026-05-06T07:08:09Z') });
    const url = decode(token);
    expect(url.origin).toBe(origin);
    expect(url.searchParams.get('X-Amz-Credential')).toBe(`AKIDEXAMPLE/20260506/${region}/sts/aws4_request`);
    // The same suffix as the SDK's own partition table says.
    const { partition } = await import('@aws-sdk/core/client');
    expect(url.hostname).toBe(`sts.${region}.${partition(region).dnsSuffix}`);
  });

  it('is cached for 10 minutes, then signed again', async () => {
    let now = new Date('2026-05-06T07:00:00Z');
    let signs = 0;
    const provider = new EksTokenProvider({
      clusterName: 'prod-a',
      region: 'us-east-1',
      credentials: async () => {
        signs += 1;
        return credentials();
      },
      clock: () => now,
    });
    const first = await provider.token();
    now = new Date('2026-05-06T07:09:59Z');
    expect(await provider.token()).toBe(first);
    now = new Date('2026-05-06T07:10:00Z');
    const second = await provider.token();
    expect(second).not.toBe(first);
    expect(decode(second).searchParams.get('X-Amz-Date')).toBe('20260506T071000Z');
    expect(signs).toBe(2);
  });
});

describe('createKubeConfig', () => {
  let emulator: KubeEmulator;
  beforeAll(async () => {
    emulator = await startKubeEmulator();
    await emulator.state.addNode({ metadata: { name: 'n1' } });
  });
  afterAll(async () => {
    await emulator.close();
  });

  it('builds an EKS config from DescribeCluster and asks the token source per request', async () => {
    let tokenCalls = 0;
    const described: string[] = [];
    const kc = await createKubeConfig({
      kind: 'eks',
      clusterName: 'prod-a',
      describeCluster: async (name) => {
        described.push(name);
        return { endpoint: emulator.url, certificateAuthority: { data: Buffer.from(emulator.caPem).toString('base64') } };
      },
      tokens: {
        token: async () => {
          tokenCalls += 1;
          return emulator.podrouteToken;
        },
      },
    });
    const nodes = await new KubeNodes(kc).listNodes();
    expect(nodes.map((n) => n.metadata.name)).toEqual(['n1']);
    await new KubeNodes(kc).getNode('n1');
    expect(described).toEqual(['prod-a']);
    expect(tokenCalls).toBe(2);
  });

  it('verifies the server against the EKS CA: another CA is refused', async () => {
    const otherCa = Buffer.from(rootCertificates[0] ?? '').toString('base64');
    emulator.stats.reset();
    const kc = await createKubeConfig({
      kind: 'eks',
      clusterName: 'prod-a',
      describeCluster: async () => ({ endpoint: emulator.url, certificateAuthority: { data: otherCa } }),
      tokens: { token: async () => emulator.podrouteToken },
    });
    const error = await new KubeNodes(kc).listNodes().then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(KubeApiError);
    expect((error as KubeApiError).status).toBeUndefined();
    expect(emulator.stats.get('GET /api/v1/nodes')).toBe(0);
  });

  it.each([
    ['JSON', () => JSON.stringify({ server: emulator.url, caData: Buffer.from(emulator.caPem).toString('base64'), token: emulator.podrouteToken })],
    ['kubeconfig YAML', () => emulator.kubeConfigYaml(emulator.podrouteToken)],
  ])('reads a %s secret', async (_kind, secret) => {
    const kc = await createKubeConfig({ kind: 'secret', fetchSecret: async () => secret() });
    expect((await new KubeNodes(kc).listNodes()).map((n) => n.metadata.name)).toEqual(['n1']);
  });

  it('reads the JSON secret again once its token is KUBE_SECRET_TTL_MS old, keeping the last good token when a read fails', async () => {
    let now = 0;
    const json = (token: string) => JSON.stringify({ server: emulator.url, caData: Buffer.from(emulator.caPem).toString('base64'), token });
    const stored: { value: string | Error } = { value: json('token-1') };
    const fetchSecret = async () => {
      if (stored.value instanceof Error) throw stored.value;
      return stored.value;
    };
    const kc = await createKubeConfig({ kind: 'secret', fetchSecret, now: () => now });
    const bearer = async () => {
      const opts: RequestOptions = {};
      await kc.applyToHTTPSOptions(opts);
      return (opts.headers as Record<string, unknown> | undefined)?.Authorization;
    };
    stored.value = json('token-2');
    now = KUBE_SECRET_TTL_MS - 1;
    expect(await bearer()).toBe('Bearer token-1');
    now = KUBE_SECRET_TTL_MS;
    expect(await bearer()).toBe('Bearer token-2');
    stored.value = new Error('Secrets Manager unreachable');
    now += KUBE_SECRET_TTL_MS;
    expect(await bearer()).toBe('Bearer token-2');
    stored.value = '{"server": "https://x.example"}';
    expect(await bearer()).toBe('Bearer token-2');
    stored.value = json(emulator.podrouteToken);
    expect(await bearer()).toBe(`Bearer ${emulator.podrouteToken}`);
    expect((await new KubeNodes(kc).listNodes()).map((n) => n.metadata.name)).toEqual(['n1']);
  });

  it('works with the emulator options directly', async () => {
    const kc = await createKubeConfig({ kind: 'options', options: emulator.kubeConfig(emulator.podrouteToken) });
    expect((await new KubeNodes(kc).listNodes()).length).toBe(1);
  });

  it.each([
    ['not JSON', '{nope'],
    ['JSON without token', JSON.stringify({ server: 'https://x.example', caData: 'Zm9v' })],
    ['http server', JSON.stringify({ server: 'http://x.example', caData: 'Zm9v', token: 't' })],
    ['TLS verification off', 'apiVersion: v1\nclusters:\n- name: c\n  cluster:\n    server: https://x.example\n    insecure-skip-tls-verify: true\nusers:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\ncurrent-context: c\n'],
  ])('rejects a secret that is %s', async (_why, text) => {
    await expect(createKubeConfig({ kind: 'secret', fetchSecret: async () => text })).rejects.toThrow(InvalidInputError);
  });
});
