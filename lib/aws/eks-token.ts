/**
 * Bearer tokens for the Kubernetes API of an EKS cluster, in the format of `aws eks get-token` and
 * aws-iam-authenticator: `k8s-aws-v1.` + base64url (no padding) of a SigV4-presigned STS
 * `GetCallerIdentity` URL whose signed headers include `x-k8s-aws-id: <cluster name>`. EKS accepts
 * such a token for 15 minutes after it was signed; the provider refreshes well before that. The
 * STS host is the region's, in the region's partition (`sts.cn-north-1.amazonaws.com.cn`).
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import { fromNodeProviderChain } from '@aws-sdk/credential-providers';
import { SignatureV4 } from '@smithy/signature-v4';

type AwsCredentials = { accessKeyId: string; secretAccessKey: string; sessionToken?: string; expiration?: Date };
type CredentialsProvider = () => Promise<AwsCredentials>;

const EKS_TOKEN_PREFIX = 'k8s-aws-v1.';
/** How long EKS accepts a token after its X-Amz-Date. */
const EKS_TOKEN_LIFETIME_MS = 15 * 60_000;
/** Presigned URL expiry, as aws-iam-authenticator sets it (the server applies its own 15 minutes). */
const PRESIGN_EXPIRES_SECONDS = 60;
const CLUSTER_ID_HEADER = 'x-k8s-aws-id';

/**
 * The DNS suffix of a region's partition, by the region name's prefix, as the SDK's partition data
 * has it (@aws-sdk/core util-endpoints partitions: each partition's `regionRegex` and `dnsSuffix`):
 * aws-cn `amazonaws.com.cn`, aws-iso `c2s.ic.gov`, aws-iso-b `sc2s.sgov.gov`, aws-iso-e
 * `cloud.adc-e.uk`, aws-iso-f `csp.hci.ic.gov`, aws-eusc `amazonaws.eu`; aws and aws-us-gov
 * `amazonaws.com`. Kept here rather than imported: the SDK does not export it from a package
 * podroute depends on (test/kube/kube-config.test.ts compares the two).
 */
const PARTITION_SUFFIXES: ReadonlyArray<[RegExp, string]> = [
  [/^cn-/, 'amazonaws.com.cn'],
  [/^us-iso-/, 'c2s.ic.gov'],
  [/^us-isob-/, 'sc2s.sgov.gov'],
  [/^eu-isoe-/, 'cloud.adc-e.uk'],
  [/^us-isof-/, 'csp.hci.ic.gov'],
  [/^eusc-/, 'amazonaws.eu'],
];

const dnsSuffixOf = (region: string): string => PARTITION_SUFFIXES.find(([prefix]) => prefix.test(region))?.[1] ?? 'amazonaws.com';

type EksTokenRequest = {
  clusterName: string;
  region: string;
  credentials: CredentialsProvider;
  /** Signing time. */
  now: Date;
};

/**
 * One token and the time EKS stops accepting it.
 * Exported for its test (test/kube/kube-config.test.ts), which reads the signed URL and the expiry.
 */
export async function createEksToken(request: EksTokenRequest): Promise<{ token: string; expiresAt: Date }> {
  const hostname = `sts.${request.region}.${dnsSuffixOf(request.region)}`;
  const signer = new SignatureV4({ credentials: request.credentials, region: request.region, service: 'sts', sha256: Sha256 });
  const presigned = await signer.presign(
    {
      method: 'GET',
      protocol: 'https:',
      hostname,
      path: '/',
      query: { Action: 'GetCallerIdentity', Version: '2011-06-15' },
      headers: { host: hostname, [CLUSTER_ID_HEADER]: request.clusterName },
    },
    { expiresIn: PRESIGN_EXPIRES_SECONDS, signingDate: request.now },
  );
  const url = new URL(`https://${hostname}/`);
  for (const [key, value] of Object.entries(presigned.query ?? {})) {
    if (typeof value === 'string') url.searchParams.append(key, value);
    else if (Array.isArray(value)) for (const v of value) url.searchParams.append(key, v);
  }
  const token = EKS_TOKEN_PREFIX + Buffer.from(url.toString(), 'utf8').toString('base64url');
  return { token, expiresAt: new Date(request.now.getTime() + EKS_TOKEN_LIFETIME_MS) };
}

type EksTokenProviderOptions = {
  clusterName: string;
  region: string;
  /** Defaults to the SDK's node provider chain (the Lambda role's credentials). */
  credentials?: CredentialsProvider;
  clock?: () => Date;
  /** Age at which a cached token is replaced; default 10 minutes (tokens live 15). */
  refreshAfterMs?: number;
};

/** A cached token source: signs a new token once the cached one is `refreshAfterMs` old. */
export class EksTokenProvider {
  private cached: { token: string; signedAt: number } | undefined;
  private pending: Promise<string> | undefined;
  private readonly credentials: CredentialsProvider;
  private readonly clock: () => Date;
  private readonly refreshAfterMs: number;

  constructor(private readonly options: EksTokenProviderOptions) {
    this.credentials = options.credentials ?? fromNodeProviderChain();
    this.clock = options.clock ?? (() => new Date());
    this.refreshAfterMs = Math.min(options.refreshAfterMs ?? 10 * 60_000, EKS_TOKEN_LIFETIME_MS - 60_000);
  }

  async token(): Promise<string> {
    const now = this.clock();
    if (this.cached && now.getTime() - this.cached.signedAt < this.refreshAfterMs) return this.cached.token;
    if (!this.pending) {
      this.pending = createEksToken({ clusterName: this.options.clusterName, region: this.options.region, credentials: this.credentials, now })
        .then(({ token }) => {
          this.cached = { token, signedAt: now.getTime() };
          return token;
        })
        .finally(() => {
          this.pending = undefined;
        });
    }
    return this.pending;
  }
}
