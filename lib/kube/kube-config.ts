/**
 * Builds the KubeConfig podroute talks to the cluster with, from one of three sources:
 * an EKS cluster (endpoint and CA from `eks:DescribeCluster`, a short-lived IAM token), a secret
 * holding a kubeconfig YAML or `{server, caData, token}` JSON, or ready KubeConfig options (the
 * local emulator's `kubeConfig()`). TLS verification of the server is always on.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { z } from 'zod';
import { InvalidInputError } from '../errors.ts';
import { describeIssue } from '../nodes/node.ts';

/** The part of an EKS `DescribeCluster` answer used here (`cluster` of DescribeClusterCommandOutput). */
export type EksClusterInfo = { endpoint?: string; certificateAuthority?: { data?: string } };

/** Anything that hands out bearer tokens (EksTokenProvider from lib/aws/eks-token.ts). */
export type TokenSource = { token(): Promise<string> };

export type KubeConfigSource =
  | { kind: 'eks'; clusterName: string; describeCluster: (name: string) => Promise<EksClusterInfo>; tokens: TokenSource }
  | { kind: 'secret'; fetchSecret: () => Promise<string> }
  | { kind: 'options'; options: KubeConfigOptions };

export type KubeConfigOptions = {
  clusters: { name: string; server: string; caData?: string; skipTLSVerify?: boolean }[];
  users: { name: string; token?: string }[];
  contexts: { name: string; cluster: string; user: string }[];
  currentContext: string;
};

type Authenticator = Parameters<KubeConfig['addAuthenticator']>[0];

const CLUSTER = 'podroute-target';
const USER = 'podroute';

const secretJsonSchema = z.object({
  server: z.url({ protocol: /^https$/, error: 'server must be an https:// URL' }),
  caData: z.string().min(1, 'caData (base64 PEM of the cluster CA) is required'),
  token: z.string().min(1, 'token is required'),
});

export async function createKubeConfig(source: KubeConfigSource): Promise<KubeConfig> {
  switch (source.kind) {
    case 'eks':
      return eksKubeConfig(source.clusterName, await source.describeCluster(source.clusterName), source.tokens);
    case 'secret':
      return kubeConfigFromSecret(await source.fetchSecret());
    case 'options':
      return checked(loadOptions(source.options));
  }
}

/** A KubeConfig for an EKS cluster whose bearer token is fetched (and refreshed) per request. */
export function eksKubeConfig(clusterName: string, cluster: EksClusterInfo, tokens: TokenSource): KubeConfig {
  const endpoint = cluster.endpoint;
  const caData = cluster.certificateAuthority?.data;
  if (!endpoint || !endpoint.startsWith('https://')) throw new InvalidInputError(`EKS cluster ${clusterName}: DescribeCluster gave no https endpoint`);
  if (!caData) throw new InvalidInputError(`EKS cluster ${clusterName}: DescribeCluster gave no certificateAuthority.data`);
  const kc = loadOptions({
    clusters: [{ name: CLUSTER, server: endpoint, caData, skipTLSVerify: false }],
    users: [{ name: USER }],
    contexts: [{ name: CLUSTER, cluster: CLUSTER, user: USER }],
    currentContext: CLUSTER,
  });
  const authenticator: Authenticator = {
    isAuthProvider: (user) => user.name === USER && !user.token,
    applyAuthentication: async (_user, opts) => {
      const token = await tokens.token();
      opts.headers = { ...(opts.headers ?? {}), Authorization: `Bearer ${token}` };
    },
  };
  kc.addAuthenticator(authenticator);
  return kc;
}

/** A secret string: a kubeconfig YAML, or JSON `{server, caData, token}`. */
export function kubeConfigFromSecret(text: string): KubeConfig {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch (cause) {
      throw new InvalidInputError('the kube secret is neither a kubeconfig nor valid JSON', { cause });
    }
    const parsed = secretJsonSchema.safeParse(value);
    if (!parsed.success) throw new InvalidInputError(`the kube secret JSON is invalid: ${describeIssue(parsed.error)}`);
    const { server, caData, token } = parsed.data;
    return checked(
      loadOptions({
        clusters: [{ name: CLUSTER, server, caData, skipTLSVerify: false }],
        users: [{ name: USER, token }],
        contexts: [{ name: CLUSTER, cluster: CLUSTER, user: USER }],
        currentContext: CLUSTER,
      }),
    );
  }
  const kc = new KubeConfig();
  try {
    kc.loadFromString(trimmed);
  } catch (cause) {
    throw new InvalidInputError('the kube secret is not a valid kubeconfig', { cause });
  }
  return checked(kc);
}

function loadOptions(options: KubeConfigOptions): KubeConfig {
  const kc = new KubeConfig();
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
