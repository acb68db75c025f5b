/**
 * podroute's configuration: one schema over the environment, validated once at cold start.
 * Every variable, its default and its meaning is listed in README.md ("Configuration").
 */
import { z } from 'zod';
import { tryParseCidr } from './cidr/cidr.ts';
import { InvalidInputError } from './errors.ts';
import { parseLabelSelector } from './nodes/label-selector.ts';
import type { LabelSelector } from './nodes/label-selector.ts';

const list = (text: string | undefined): string[] =>
  (text ?? '').split(',').map((part) => part.trim()).filter((part) => part.length > 0);

const numberFrom = (fallback: number) =>
  z.string().optional().transform((text, ctx) => {
    if (text === undefined || text.trim() === '') return fallback;
    const value = Number(text);
    if (!Number.isFinite(value)) {
      ctx.addIssue({ code: 'custom', message: `expected a number, got ${JSON.stringify(text)}` });
      return z.NEVER;
    }
    return value;
  });

export const configSchema = z
  .object({
    CLUSTER_NAME: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/, 'CLUSTER_NAME must be a cluster name (letters, digits, - _ .)'),
    CLUSTER_CIDRS: z.string().transform((text, ctx) => {
      const cidrs = list(text);
      if (cidrs.length === 0 || cidrs.length > 2) {
        ctx.addIssue({ code: 'custom', message: 'CLUSTER_CIDRS must list one or two CIDRs (one per IP family), comma-separated' });
        return z.NEVER;
      }
      for (const cidr of cidrs) {
        if (!tryParseCidr(cidr)) {
          ctx.addIssue({ code: 'custom', message: `CLUSTER_CIDRS has an invalid CIDR ${JSON.stringify(cidr)}` });
          return z.NEVER;
        }
      }
      const families = cidrs.map((cidr) => tryParseCidr(cidr)?.family);
      if (families.length === 2 && families[0] === families[1]) {
        ctx.addIssue({ code: 'custom', message: 'CLUSTER_CIDRS with two CIDRs must have one IPv4 and one IPv6 (dual-stack)' });
        return z.NEVER;
      }
      return cidrs;
    }),
    NODE_MASK_SIZE_IPV4: numberFrom(24),
    NODE_MASK_SIZE_IPV6: numberFrom(64),
    MODE: z.enum(['routes', 'prefixes']).default('routes'),
    NODE_SYNC_MODE: z.enum(['SyncFromCluster', 'SyncFromCloud']).default('SyncFromCluster'),
    ROUTE_TABLE_IDS: z.string().optional().transform(list),
    QUEUE_URL: z.string().default(''),
    CIDR_TABLE_NAME: z.string().default(''),
    KUBE_AUTH: z.enum(['eks', 'secret']).default('eks'),
    EKS_CLUSTER_NAME: z.string().optional(),
    KUBE_SECRET_ID: z.string().optional(),
    WEBHOOK_SECRET_SOURCE: z.enum(['secretsmanager', 'ssm']).default('secretsmanager'),
    WEBHOOK_SECRET_ID: z.string().default(''),
    MAX_DELETE_SHARE: numberFrom(0.5),
    MIN_DELETES_FOR_GUARD: numberFrom(5),
    LEASE_GRACE_SECONDS: numberFrom(600),
    MAX_RECEIVE_COUNT: numberFrom(3),
    // A Kubernetes label selector (kubectl -l syntax); empty = every node is podroute's.
    NODE_SELECTOR: z
      .string()
      .optional()
      .transform((text, ctx) => {
        try {
          return parseLabelSelector(text ?? '');
        } catch (error) {
          ctx.addIssue({ code: 'custom', message: `NODE_SELECTOR: ${error instanceof Error ? error.message : String(error)}` });
          return z.NEVER;
        }
      }),
  })
  .superRefine((env, ctx) => {
    if (env.KUBE_AUTH === 'secret' && !env.KUBE_SECRET_ID) {
      ctx.addIssue({ code: 'custom', path: ['KUBE_SECRET_ID'], message: 'KUBE_SECRET_ID is required when KUBE_AUTH=secret' });
    }
    if (!Number.isInteger(env.MAX_RECEIVE_COUNT) || env.MAX_RECEIVE_COUNT < 1) {
      ctx.addIssue({ code: 'custom', path: ['MAX_RECEIVE_COUNT'], message: 'MAX_RECEIVE_COUNT must be a whole number >= 1' });
    }
    if (!(env.MAX_DELETE_SHARE > 0 && env.MAX_DELETE_SHARE <= 1)) {
      ctx.addIssue({ code: 'custom', path: ['MAX_DELETE_SHARE'], message: 'MAX_DELETE_SHARE must be in (0, 1]' });
    }
    if (env.MODE === 'prefixes' && (env.NODE_MASK_SIZE_IPV4 !== 28 || env.NODE_MASK_SIZE_IPV6 !== 80)) {
      ctx.addIssue({
        code: 'custom',
        path: ['MODE'],
        message: 'MODE=prefixes needs NODE_MASK_SIZE_IPV4=28 and NODE_MASK_SIZE_IPV6=80 (the sizes of ENI prefix delegation)',
      });
    }
  });

export interface Config {
  clusterName: string;
  clusterCidrs: string[];
  nodeMaskSize: { 4: number; 6: number };
  mode: 'routes' | 'prefixes';
  nodeSyncMode: 'SyncFromCluster' | 'SyncFromCloud';
  routeTableIds: string[];
  queueUrl: string;
  cidrTableName: string;
  kube: { auth: 'eks' | 'secret'; eksClusterName: string; secretId: string | undefined };
  webhookSecret: { source: 'secretsmanager' | 'ssm'; id: string };
  maxDeleteShare: number;
  minDeletesForGuard: number;
  leaseGraceSeconds: number;
  /** Worker deliveries before the queue moves a message to the dead-letter queue. */
  maxReceiveCount: number;
  /** Only nodes whose labels match are podroute's (NODE_SELECTOR; empty = every node). */
  nodeSelector: LabelSelector;
}

/** Reads the config from an environment (process.env in a handler); throws one clear error. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const result = configSchema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => {
      const key = issue.path.join('.');
      return issue.message.includes(key) || key === '' ? issue.message : `${key}: ${issue.message}`;
    });
    throw new InvalidInputError(`invalid podroute configuration: ${problems.join('; ')}`);
  }
  const e = result.data;
  return {
    clusterName: e.CLUSTER_NAME,
    clusterCidrs: e.CLUSTER_CIDRS,
    nodeMaskSize: { 4: e.NODE_MASK_SIZE_IPV4, 6: e.NODE_MASK_SIZE_IPV6 },
    mode: e.MODE,
    nodeSyncMode: e.NODE_SYNC_MODE,
    routeTableIds: e.ROUTE_TABLE_IDS,
    queueUrl: e.QUEUE_URL,
    cidrTableName: e.CIDR_TABLE_NAME,
    kube: { auth: e.KUBE_AUTH, eksClusterName: e.EKS_CLUSTER_NAME ?? e.CLUSTER_NAME, secretId: e.KUBE_SECRET_ID },
    webhookSecret: { source: e.WEBHOOK_SECRET_SOURCE, id: e.WEBHOOK_SECRET_ID },
    maxDeleteShare: e.MAX_DELETE_SHARE,
    minDeletesForGuard: e.MIN_DELETES_FOR_GUARD,
    leaseGraceSeconds: e.LEASE_GRACE_SECONDS,
    maxReceiveCount: e.MAX_RECEIVE_COUNT,
    nodeSelector: e.NODE_SELECTOR,
  };
}
