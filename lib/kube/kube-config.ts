/**
 * Builds the endpoint (server, TLS, credentials) podroute talks to the cluster with, from one of
 * three sources: an EKS cluster (endpoint and CA from `eks:DescribeCluster`, a short-lived IAM
 * token), a secret holding a kubeconfig YAML or `{server, caData, token}` JSON (its token read again
 * every KUBE_SECRET_TTL_MS, so a short-lived one refreshed into the secret is used without a cold
 * start), or ready KubeConfig options (the local emulator's `kubeConfig()`). TLS verification of the
 * server is always on.
 *
 * A kubeconfig (YAML, or options) is loaded by @kubernetes/client-node's KubeConfig, which knows
 * every way a kubeconfig authenticates; it is imported only then (it weighs
 * about 0.8 MB bundled). An EKS cluster and the JSON secret need only a server, a CA and a bearer
 * token, which `BearerEndpoint` applies itself.
 */
import type { RequestOptions } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import * as z from '../util/zod-mini.ts';
import { InvalidInputError } from '../errors.ts';
import { describeIssue } from '../nodes/node.ts';
import type { KubeEndpoint } from './kube-http.ts';

/** The part of an EKS `DescribeCluster` answer used here (`cluster` of DescribeClusterCommandOutput). */
type EksClusterInfo = { endpoint?: string; certificateAuthority?: { data?: string } };

/** Anything that hands out bearer tokens (EksTokenProvider from lib/aws/eks-token.ts). */
type TokenSource = { token(): Promise<string> };

type KubeConfigSource =
  | { kind: 'eks'; clusterName: string; describeCluster: (name: string) => Promise<EksClusterInfo>; tokens: TokenSource }
  | { kind: 'secret'; fetchSecret: () => Promise<string>; now?: () => number }
  | { kind: 'options'; options: KubeConfigOptions };

type KubeConfigOptions = {
  clusters: { name: string; server: string; caData?: string; skipTLSVerify?: boolean }[];
  users: { name: string; token?: string }[];
  contexts: { name: string; cluster: string; user: string }[];
  currentContext: string;
};

const secretJsonSchema = z.onFirstUse(() => z.object({
  server: z.url({ protocol: /^https$/, error: 'server must be an https:// URL' }),
  caData: z.string().check(z.minLength(1, 'caData (base64 PEM of the cluster CA) is required')),
  token: z.string().check(z.minLength(1, 'token is required')),
}));

export async function createKubeConfig(source: KubeConfigSource): Promise<KubeEndpoint> {
  switch (source.kind) {
    case 'eks':
      return eksKubeConfig(source.clusterName, await source.describeCluster(source.clusterName), source.tokens);
    case 'secret':
      return kubeConfigFromSecret(await source.fetchSecret(), source.fetchSecret, source.now ?? Date.now);
    case 'options':
      return checked(await loadOptions(source.options));
  }
}

/**
 * A server with its CA and a bearer token (RFC 6750 `Authorization: Bearer`, as the API server's
 * token authenticators read it: Kubernetes docs, "Authenticating"), asked of the token source per
 * request so a refreshed one is used. The CA is the only trusted root: TLS verification stays on.
 */
class BearerEndpoint implements KubeEndpoint {
  private readonly cluster: { server: string };
  private readonly ca: Buffer;
  private readonly tokens: TokenSource;

  constructor(server: string, caData: string, tokens: TokenSource) {
    if (!server.startsWith('https://')) throw new InvalidInputError('the cluster server must be an https:// URL');
    this.cluster = { server };
    // caData: base64 of the PEM, as kubeconfig's certificate-authority-data and EKS's certificateAuthority.data.
    this.ca = Buffer.from(caData, 'base64');
    if (this.ca.length === 0) throw new InvalidInputError('the cluster CA (base64 PEM) is empty');
    this.tokens = tokens;
  }

  getCurrentCluster(): { server: string } {
    return this.cluster;
  }

  async applyToHTTPSOptions(opts: RequestOptions): Promise<void> {
    const token = await this.tokens.token();
    opts.ca = this.ca;
    opts.rejectUnauthorized = true;
    opts.headers = { ...(opts.headers ?? {}), Authorization: `Bearer ${token}` };
  }
}

/** The endpoint of an EKS cluster whose bearer token is fetched (and refreshed) per request. */
function eksKubeConfig(clusterName: string, cluster: EksClusterInfo, tokens: TokenSource): KubeEndpoint {
  const endpoint = cluster.endpoint;
  const caData = cluster.certificateAuthority?.data;
  if (!endpoint || !endpoint.startsWith('https://')) throw new InvalidInputError(`EKS cluster ${clusterName}: DescribeCluster gave no https endpoint`);
  if (!caData) throw new InvalidInputError(`EKS cluster ${clusterName}: DescribeCluster gave no certificateAuthority.data`);
  return new BearerEndpoint(endpoint, caData, tokens);
}

/** The JSON form of the kube secret, validated. */
function secretJson(trimmed: string): z.infer<ReturnType<typeof secretJsonSchema>> {
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch (cause) {
    throw new InvalidInputError('the kube secret is neither a kubeconfig nor valid JSON', { cause });
  }
  const parsed = secretJsonSchema().safeParse(value);
  if (!parsed.success) throw new InvalidInputError(`the kube secret JSON is invalid: ${describeIssue(parsed.error)}`);
  return parsed.data;
}

/**
 * How long a token from the kube secret's JSON is used before the secret is read again. A bounded
 * token (TokenRequest, `kubectl create token --duration`) refreshed into the secret well before it
 * expires is then picked up by warm functions within this.
 */
export const KUBE_SECRET_TTL_MS = 5 * 60_000;

/**
 * The token of the JSON kube secret, read again once KUBE_SECRET_TTL_MS old. A read that fails or
 * no longer validates keeps the last good token (the next request tries again), so a brief outage
 * of the secret store does not fail requests a valid token can still serve; the server and the CA
 * are the first read's (a cold start takes new ones).
 */
class SecretTokens implements TokenSource {
  private readAt: number;
  private pending: Promise<string> | undefined;

  constructor(
    private current: string,
    private readonly fetchSecret: () => Promise<string>,
    private readonly now: () => number,
  ) {
    this.readAt = now();
  }

  token(): Promise<string> {
    if (this.now() - this.readAt < KUBE_SECRET_TTL_MS) return Promise.resolve(this.current);
    this.pending ??= this.reread().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  private async reread(): Promise<string> {
    try {
      this.current = secretJson((await this.fetchSecret()).trim()).token;
      this.readAt = this.now();
    } catch {
      // Kept: the last good token; the next request reads again.
    }
    return this.current;
  }
}

/** A secret string: a kubeconfig YAML, or JSON `{server, caData, token}` (whose token is re-read, see SecretTokens). */
async function kubeConfigFromSecret(text: string, fetchSecret: () => Promise<string>, now: () => number): Promise<KubeEndpoint> {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    const { server, caData, token } = secretJson(trimmed);
    return new BearerEndpoint(server, caData, new SecretTokens(token, fetchSecret, now));
  }
  const kc = new (await kubeConfigClass())();
  try {
    kc.loadFromString(trimmed);
  } catch (cause) {
    throw new InvalidInputError('the kube secret is not a valid kubeconfig', { cause });
  }
  return checked(kc);
}

/** @kubernetes/client-node's KubeConfig, loaded on first use (its module alone, not the generated API clients). */
async function kubeConfigClass(): Promise<typeof KubeConfig> {
  return (await import('@kubernetes/client-node/dist/config.js')).KubeConfig;
}

async function loadOptions(options: KubeConfigOptions): Promise<KubeConfig> {
  const kc = new (await kubeConfigClass())();
  kc.loadFromOptions({
    ...options,
    clusters: options.clusters.map((c) => ({ ...c, skipTLSVerify: c.skipTLSVerify ?? false })),
  });
  return kc;
}

function checked(kc: KubeConfig): KubeConfig {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new InvalidInputError('the kubeconfig has no current cluster');
  if (!cluster.server.startsWith('https://')) throw new InvalidInputError('the kubeconfig server must be https://');
  if (cluster.skipTLSVerify) throw new InvalidInputError('the kubeconfig disables TLS verification (insecure-skip-tls-verify); podroute refuses that');
  if (!kc.getCurrentUser()) throw new InvalidInputError('the kubeconfig has no current user');
  return kc;
}
