/**
 * podroute's configuration: one schema over the environment, validated once at cold start.
 * Every variable, its default and its meaning is listed in docs/configuration.md.
 */
import * as z from './util/zod-mini.ts';
import { reject } from './util/zod-mini.ts';
import { addressBits, formatCidr, lastAddress, overlaps, parseCidr, tryParseAddress, tryParseCidr } from './cidr/cidr.ts';
import { MAX_IPV6_SUBNET_BITS } from './ipam/index.ts';
import { InvalidInputError } from './errors.ts';
import { parseLabelSelector } from './nodes/label-selector.ts';
import type { LabelSelector } from './nodes/label-selector.ts';
import { DEFAULT_MAX_DELETE_SHARE, DEFAULT_MIN_DELETES_FOR_GUARD, ROUTE_TABLE_ID } from './routes/index.ts';
import { DEFAULT_ROUTE_QUOTA, MAX_ROUTE_QUOTA } from './routes/route-table-headroom.ts';
import { DEFAULT_MAX_RECEIVE_COUNT } from './messages/work-queue.ts';

/** The longest part of a value an error quotes: a message never echoes a whole (10 KB) value. */
const MAX_SHOWN = 64;

/** `text` cut to MAX_SHOWN characters for an error message. */
const cut = (text: string): string => (text.length <= MAX_SHOWN ? text : `${text.slice(0, MAX_SHOWN)}… (${text.length} characters)`);

/** `text` quoted for an error message, cut to MAX_SHOWN characters. */
const shown = (text: string): string => (text.length <= MAX_SHOWN ? JSON.stringify(text) : `${JSON.stringify(text.slice(0, MAX_SHOWN))}… (${text.length} characters)`);

/** The longest configuration error message, whatever the values. */
const MAX_PROBLEMS_LENGTH = 500;

const list = (text: string | undefined): string[] =>
  (text ?? '').split(',').map((part) => part.trim()).filter((part) => part.length > 0);

/** A numeric variable's bounds: whole numbers only or any number, and its range. */
interface NumberBounds {
  integer: boolean;
  min: number;
  max: number;
  /** `min` itself is not allowed (a share must be above 0). */
  minExclusive?: boolean;
}

/**
 * The bounds of every numeric variable, checked at cold start so that no value can pass here and
 * fail later, in every run (a fractional MIN_DELETES_FOR_GUARD would make every reconcile throw).
 */
const NUMBER_BOUNDS = {
  // Within the family; longer than the cluster CIDR's prefix is checked against CLUSTER_CIDRS below.
  NODE_MASK_SIZE_IPV4: { integer: true, min: 1, max: 32 },
  NODE_MASK_SIZE_IPV6: { integer: true, min: 1, max: 128 },
  // A share of the live routes: 0 would withhold every deletion, above 1 would never trip.
  MAX_DELETE_SHARE: { integer: false, min: 0, max: 1, minExclusive: true },
  // A count of deletions (the planner rejects anything but a whole number >= 0). At most 1,000:
  // a route table holds at most 1,000 routes (the adjustable quota's ceiling, ARCHITECTURE.md), so
  // a larger floor would switch the guard off without saying so.
  MIN_DELETES_FOR_GUARD: { integer: true, min: 0, max: 1000 },
  // Floor: a lease is written while the node's CREATE is admitted, and the node is listed only
  // once the API server has stored it: up to kube-apiserver's --request-timeout (60 s by default)
  // later. Reconcile judges a lease's age at the end of a run against a node list read at its start,
  // and a run may last up to its 60 s Lambda timeout. 300 s covers both with room for a raised
  // request timeout and clock skew between functions; less could reclaim a joining node's block.
  // Ceiling: a week; longer only keeps the blocks of vanished nodes from new ones.
  LEASE_GRACE_SECONDS: { integer: true, min: 300, max: 604_800 },
  // How long NetworkUnavailable=True may last before a node counts as blocked (NodesBlocked): at
  // least one reconcile period (60 s), at most a day.
  BLOCKED_NODE_SECONDS: { integer: true, min: 60, max: 86_400 },
  // SQS redrive policy maxReceiveCount: 1 to 1,000 (Amazon SQS Developer Guide, "Configuring a
  // dead-letter queue": maximum receives), and it must equal the queue's.
  MAX_RECEIVE_COUNT: { integer: true, min: 1, max: 1000 },
  // The account's "Routes per route table" quota, the denominator of RouteTableHeadroom: at most
  // 1,000 (lib/routes/route-table-headroom.ts, from the Amazon VPC quotas page).
  ROUTE_QUOTA: { integer: true, min: 1, max: MAX_ROUTE_QUOTA },
} satisfies Record<string, NumberBounds>;

export type NumericVariable = keyof typeof NUMBER_BOUNDS;

/** Why `value` is not allowed for `name`, or null when it is. */
export function numberProblem(name: NumericVariable, value: number): string | null {
  const bounds: NumberBounds = NUMBER_BOUNDS[name];
  const range = bounds.max === Number.MAX_SAFE_INTEGER ? `>= ${bounds.min}` : `${bounds.minExclusive ? '>' : 'from'} ${bounds.min} ${bounds.minExclusive ? 'and <=' : 'to'} ${bounds.max}`;
  const what = bounds.integer ? `a whole number ${range}` : `a number ${range}`;
  const below = bounds.minExclusive ? value <= bounds.min : value < bounds.min;
  if (!Number.isFinite(value) || (bounds.integer && !Number.isInteger(value)) || below || value > bounds.max) {
    return `${name} must be ${what}, got ${cut(String(value))}`;
  }
  return null;
}

/**
 * Plain decimal notation: digits, and a fraction after a `.`. Number() alone also reads `0x12C`,
 * `0b101`, `0o30`, `1e0` and `+5`, so a value could mean something other than what it looks like.
 */
const DECIMAL = /^-?[0-9]+(\.[0-9]+)?$/;

const numberFrom = (name: NumericVariable) =>
  z.pipe(z.optional(z.string()), z.transform((text: string | undefined, ctx): number | undefined => {
    if (text === undefined || text.trim() === '') return undefined;
    const trimmed = text.trim();
    const bounds: NumberBounds = NUMBER_BOUNDS[name];
    const notation = `${name} must be written in plain decimal digits${bounds.integer ? '' : ' (a fraction as 0.5)'}, got ${shown(text)}`;
    const value = DECIMAL.test(trimmed) ? Number(trimmed) : Number.NaN;
    const problem = Number.isFinite(value) ? numberProblem(name, value) : notation;
    if (problem !== null) return reject(ctx, problem);
    return value;
  }));

/** Node masks when NODE_MASK_SIZE_IPV4/IPV6 are unset: upstream's defaults, and ENI prefix sizes in prefixes mode. */
const DEFAULT_NODE_MASKS = { routes: { 4: 24, 6: 64 }, prefixes: { 4: 28, 6: 80 } } as const;

/**
 * Ranges no cluster CIDR may overlap: link-local addresses are never forwarded by a router (RFC
 * 3927 for 169.254.0.0/16, which also holds the instance metadata service; RFC 4291 for fe80::/10),
 * multicast groups are no unicast pod addresses (RFC 5771 for 224.0.0.0/4, RFC 4291 for ff00::/8),
 * and loopback addresses never leave their host (RFC 1122 section 3.2.1.3 for 127.0.0.0/8, RFC 4291
 * for ::1/128). Parsed where they are checked, not at import.
 */
const UNROUTABLE = [
  { what: 'loopback', cidr: '127.0.0.0/8' },
  { what: 'loopback', cidr: '::1/128' },
  { what: 'link-local', cidr: '169.254.0.0/16' },
  { what: 'link-local', cidr: 'fe80::/10' },
  { what: 'multicast', cidr: '224.0.0.0/4' },
  { what: 'multicast', cidr: 'ff00::/8' },
];

/** The shortest cluster CIDR prefix accepted per family. */
const MIN_CLUSTER_PREFIX = { 4: 8, 6: 8 } as const;

/**
 * Why `text` cannot be a cluster CIDR, or null. Shared by the functions' config and the CLI.
 *
 * Too broad is refused, because every route whose first or last address lies in a cluster CIDR is
 * podroute's (upstream `isResponsibleForRoute`), and podroute deletes such routes when they point
 * at an instance no node owns:
 * - a CIDR holding the family's first or last address (`0.0.0.0`, `255.255.255.255`, `::`,
 *   `ffff:…:ffff`) makes the default route (`0.0.0.0/0`, `::/0`) podroute's: a NAT instance's
 *   default route would be deleted. That refuses `/0` and every CIDR at either end of the space;
 * - prefixes shorter than /8: the broadest private blocks are 10.0.0.0/8 (RFC 1918) and fd00::/8
 *   (RFC 4193 locally assigned), so a broader cluster CIDR spans public space, where instance routes
 *   to VPN or firewall appliances live and would become deletable.
 */
function clusterCidrProblem(text: string): string | null {
  const cidr = tryParseCidr(text);
  if (!cidr) return `invalid CIDR ${shown(text)}`;
  const canonical = formatCidr(cidr);
  const address = tryParseAddress(text.slice(0, text.indexOf('/')));
  if (address !== null && address.value !== cidr.network) return `${text} has host bits set: write ${canonical}`;
  const bits = addressBits(cidr.family);
  const top = (1n << BigInt(bits)) - 1n;
  if (cidr.network === 0n || lastAddress(cidr) === top) {
    const everything = cidr.family === 4 ? '0.0.0.0/0' : '::/0';
    return `${canonical} is too broad: it holds an end of the address space, so the default route ${everything} (a NAT instance's, say) would count as podroute's and could be deleted`;
  }
  if (cidr.prefix < MIN_CLUSTER_PREFIX[cidr.family]) {
    return `${canonical} is too broad: a cluster CIDR must be /${MIN_CLUSTER_PREFIX[cidr.family]} or longer (instance routes inside it that no node owns are deleted)`;
  }
  const special = UNROUTABLE.map((range) => ({ what: range.what, cidr: parseCidr(range.cidr) })).find((range) => range.cidr.family === cidr.family && overlaps(range.cidr, cidr));
  if (special) return `${canonical} overlaps the ${special.what} range ${formatCidr(special.cidr)}`;
  return null;
}

/** Why `cidrs` cannot be the cluster CIDRs (one or two, one per family, none too broad), or null. */
export function clusterCidrsProblem(cidrs: readonly string[]): string | null {
  if (cidrs.length === 0 || cidrs.length > 2) return 'must list one or two CIDRs (one per IP family), comma-separated';
  for (const cidr of cidrs) {
    const problem = clusterCidrProblem(cidr);
    if (problem !== null) return problem;
  }
  const families = cidrs.map((cidr) => tryParseCidr(cidr)?.family);
  if (families.length === 2 && families[0] === families[1]) return 'with two CIDRs must have one IPv4 and one IPv6 (dual-stack)';
  return null;
}

/**
 * MIGRATION_MASK_SIZES: pod CIDR masks other than the node mask that reconcile may adopt (a cluster
 * migrated from kube-controller-manager or the cloud controller manager with another
 * --node-cidr-mask-size), as `ipv4:<n>` / `ipv6:<n>` entries, comma-separated. Default none: a pod
 * CIDR of another size is a conflict, never leased or routed (lib/routes/ownership.ts).
 */
const MIGRATION_ENTRY = /^ipv([46]):([0-9]{1,3})$/;

const migrationMaskSizes = () => z.pipe(z.optional(z.string()), z.transform((text: string | undefined, ctx): { 4: number[]; 6: number[] } => {
  const masks: { 4: number[]; 6: number[] } = { 4: [], 6: [] };
  for (const entry of list(text)) {
    const match = MIGRATION_ENTRY.exec(entry);
    const family = match?.[1] === '4' ? 4 : 6;
    const size = Number(match?.[2]);
    if (!match || size < 1 || size > addressBits(family)) {
      const shown = entry.length > 40 ? `${entry.slice(0, 40)}...` : entry;
      return reject(ctx, `MIGRATION_MASK_SIZES entries must be ipv4:<1-32> or ipv6:<1-128> (e.g. ipv4:23,ipv6:80), got ${JSON.stringify(shown)}`);
    }
    if (!masks[family].includes(size)) masks[family].push(size);
  }
  return masks;
}));

/** Every variable, each checked on its own. */
const variables = () => z
  .object({
    CLUSTER_NAME: z.string().check(z.regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/, 'CLUSTER_NAME must be a cluster name (letters, digits, - _ .)')),
    CLUSTER_CIDRS: z.pipe(z.string(), z.transform((text: string, ctx) => {
      const cidrs = list(text);
      const problem = clusterCidrsProblem(cidrs);
      if (problem !== null) return reject(ctx, `CLUSTER_CIDRS ${problem}`);
      return cidrs;
    })),
    NODE_MASK_SIZE_IPV4: numberFrom('NODE_MASK_SIZE_IPV4'),
    NODE_MASK_SIZE_IPV6: numberFrom('NODE_MASK_SIZE_IPV6'),
    MIGRATION_MASK_SIZES: migrationMaskSizes(),
    MODE: z._default(z.enum(['routes', 'prefixes']), 'routes'),
    NODE_SYNC_MODE: z._default(z.enum(['SyncFromCluster', 'SyncFromCloud']), 'SyncFromCluster'),
    // EC2 API Reference, CreateSubnetCidrReservation: Description is a free string on the reservation.
    PREFIX_RESERVATION_DESCRIPTION: z._default(z.string().check(z.trim(), z.minLength(1)), 'podroute'),
    ROUTE_TABLE_IDS: z.pipe(
      z.optional(z.string()),
      z.transform((text: string | undefined, ctx) => {
        const ids = list(text);
        const bad = ids.filter((id) => !ROUTE_TABLE_ID.test(id));
        if (bad.length > 0) {
          const more = bad.length > 3 ? ` and ${bad.length - 3} more` : '';
          return reject(ctx, `ROUTE_TABLE_IDS must be EC2 route table ids (rtb- and 8 or 17 hex characters), got ${bad.slice(0, 3).map(shown).join(', ')}${more}`);
        }
        return ids;
      }),
    ),
    QUEUE_URL: z._default(z.string(), ''),
    CIDR_TABLE_NAME: z._default(z.string(), ''),
    KUBE_AUTH: z._default(z.enum(['eks', 'secret']), 'eks'),
    EKS_CLUSTER_NAME: z.optional(z.string()),
    KUBE_SECRET_ID: z.optional(z.string()),
    WEBHOOK_SECRET_SOURCE: z._default(z.enum(['secretsmanager', 'ssm']), 'secretsmanager'),
    WEBHOOK_SECRET_ID: z._default(z.string(), ''),
    // The NodeJoined / NodeLeft signing key: a secret of its own, beside the URL token.
    WEBHOOK_SIGNING_SECRET_ID: z._default(z.string(), ''),
    MAX_DELETE_SHARE: numberFrom('MAX_DELETE_SHARE'),
    MIN_DELETES_FOR_GUARD: numberFrom('MIN_DELETES_FOR_GUARD'),
    LEASE_GRACE_SECONDS: numberFrom('LEASE_GRACE_SECONDS'),
    BLOCKED_NODE_SECONDS: numberFrom('BLOCKED_NODE_SECONDS'),
    MAX_RECEIVE_COUNT: numberFrom('MAX_RECEIVE_COUNT'),
    ROUTE_QUOTA: numberFrom('ROUTE_QUOTA'),
    // off: observe mode, beside another route controller (docs/migrate.md): plan and report, write nothing.
    WRITES: z._default(z.enum(['on', 'off']), 'on'),
    // A Kubernetes label selector (kubectl -l syntax); empty = every node is podroute's.
    NODE_SELECTOR: z.pipe(
      z.optional(z.string()),
      z.transform((text: string | undefined, ctx) => {
        try {
          return parseLabelSelector(text ?? '');
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          return reject(ctx, `NODE_SELECTOR: ${message.length > 200 ? `${message.slice(0, 200)}…` : message}`);
        }
      }),
    ),
  });

type Variables = z.output<ReturnType<typeof variables>>;

/** The checks across variables: each issue names the variable to change. */
function crossChecks(env: Variables, ctx: z.core.$RefinementCtx<Variables>): void {
  // One secret for both would let whoever holds the URL token sign NodeLeft events too.
  if (env.WEBHOOK_SIGNING_SECRET_ID !== '' && env.WEBHOOK_SIGNING_SECRET_ID === env.WEBHOOK_SECRET_ID) {
    ctx.addIssue({ code: 'custom', path: ['WEBHOOK_SIGNING_SECRET_ID'], message: 'WEBHOOK_SIGNING_SECRET_ID must name another secret than WEBHOOK_SECRET_ID (the signing key and the URL token are separate secrets)' });
  }
  if (env.KUBE_AUTH === 'secret' && !env.KUBE_SECRET_ID) {
    ctx.addIssue({ code: 'custom', path: ['KUBE_SECRET_ID'], message: 'KUBE_SECRET_ID is required when KUBE_AUTH=secret' });
  }
  const masks = nodeMasks(env);
  if (env.MODE === 'prefixes') {
    const { 4: v4, 6: v6 } = DEFAULT_NODE_MASKS.prefixes;
    if (masks[4] !== v4 || masks[6] !== v6) {
      ctx.addIssue({
        code: 'custom',
        path: ['MODE'],
        message: `MODE=prefixes needs NODE_MASK_SIZE_IPV4=${v4} and NODE_MASK_SIZE_IPV6=${v6} (the sizes of ENI prefix delegation; leave them unset for these)`,
      });
    }
    const migration = env.MIGRATION_MASK_SIZES;
    if (migration !== undefined && migration[4].length + migration[6].length > 0) {
      // An ENI prefix has one size (/28, /80: Amazon EC2 User Guide, "Assign prefixes to network interfaces").
      ctx.addIssue({ code: 'custom', path: ['MIGRATION_MASK_SIZES'], message: 'MIGRATION_MASK_SIZES is for routes mode only: an ENI prefix has one size' });
    }
  }
  for (const text of Array.isArray(env.CLUSTER_CIDRS) ? env.CLUSTER_CIDRS : []) {
    const cluster = tryParseCidr(text);
    if (!cluster) continue;
    const variable = cluster.family === 4 ? 'NODE_MASK_SIZE_IPV4' : 'NODE_MASK_SIZE_IPV6';
    const mask = masks[cluster.family];
    if (mask <= cluster.prefix) {
      ctx.addIssue({ code: 'custom', path: [variable], message: `${variable}=${mask} must be longer than the cluster CIDR ${formatCidr(cluster)} (/${cluster.prefix}), so it holds more than one node` });
    } else if (cluster.family === 6 && mask - cluster.prefix > MAX_IPV6_SUBNET_BITS && env.MODE !== 'prefixes') {
      // Not in prefixes mode: its sets are pod ranges (reservations inside a subnet, and an IPv6
      // subnet is a /64, Amazon VPC User Guide "IPv6 subnet sizing"), so /80 blocks stay within 16 bits.
      // Upstream cidrset's limit (ARCHITECTURE.md, the CIDR set): at most 2^16 IPv6 node blocks.
      ctx.addIssue({
        code: 'custom',
        path: [variable],
        message: `${variable}=${mask} may be at most ${MAX_IPV6_SUBNET_BITS} bits longer than the cluster CIDR ${formatCidr(cluster)}: at most /${cluster.prefix + MAX_IPV6_SUBNET_BITS}`,
      });
    }
  }
}

/** Exported for test/infra/serverless-template.test.ts: serverless.yml sets every variable it reads. */
export const configSchema = z.onFirstUse(() => variables().check(z.superRefine(crossChecks)));

function nodeMasks(env: { MODE: 'routes' | 'prefixes'; NODE_MASK_SIZE_IPV4: number | undefined; NODE_MASK_SIZE_IPV6: number | undefined }): { 4: number; 6: number } {
  const defaults = DEFAULT_NODE_MASKS[env.MODE];
  return { 4: env.NODE_MASK_SIZE_IPV4 ?? defaults[4], 6: env.NODE_MASK_SIZE_IPV6 ?? defaults[6] };
}

export interface Config {
  clusterName: string;
  clusterCidrs: string[];
  nodeMaskSize: { 4: number; 6: number };
  /** Pod CIDR masks besides the node mask that reconcile may adopt (MIGRATION_MASK_SIZES; default none). */
  migrationMaskSizes: { 4: number[]; 6: number[] };
  mode: 'routes' | 'prefixes';
  nodeSyncMode: 'SyncFromCluster' | 'SyncFromCloud';
  routeTableIds: string[];
  queueUrl: string;
  cidrTableName: string;
  kube: { auth: 'eks' | 'secret'; eksClusterName: string; secretId: string | undefined };
  /** Where the webhook's two secrets live: the URL token (`id`) and the event signing key (`signingKeyId`). */
  webhookSecret: { source: 'secretsmanager' | 'ssm'; id: string; signingKeyId: string };
  maxDeleteShare: number;
  minDeletesForGuard: number;
  leaseGraceSeconds: number;
  /** A node NetworkUnavailable=True for longer than this counts as blocked (metric NodesBlocked). */
  blockedNodeSeconds: number;
  /** Worker deliveries before the queue moves a message to the dead-letter queue. */
  maxReceiveCount: number;
  /** Routes per route table and family the account's quota allows (ROUTE_QUOTA; metric RouteTableHeadroom). */
  routeQuota: number;
  /** Only nodes whose labels match are podroute's (NODE_SELECTOR; empty = every node). */
  nodeSelector: LabelSelector;
  /**
   * Prefixes mode: the Description that marks a subnet CIDR reservation as podroute's
   * (PREFIX_RESERVATION_DESCRIPTION, default `podroute`, what `podroute reservations` writes).
   */
  prefixReservationDescription?: string;
  /**
   * WRITES (default `on`). `off` is observe mode: every run plans and reports its drift, and no
   * write reaches EC2, DynamoDB, the queue or Kubernetes (functions/wiring.ts). Absent means on.
   */
  writes?: 'on' | 'off';
}

/** Reads the config from an environment (process.env in a handler); throws one clear error. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const result = configSchema().safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => {
      const key = issue.path.join('.');
      return issue.message.includes(key) || key === '' ? issue.message : `${key}: ${issue.message}`;
    });
    const text = problems.join('; ');
    // Every message quotes values cut short already; this bounds their sum (and zod's own wording).
    throw new InvalidInputError(`invalid podroute configuration: ${text.length > MAX_PROBLEMS_LENGTH ? `${text.slice(0, MAX_PROBLEMS_LENGTH)}…` : text}`);
  }
  const e = result.data;
  return {
    clusterName: e.CLUSTER_NAME,
    clusterCidrs: e.CLUSTER_CIDRS,
    nodeMaskSize: nodeMasks(e),
    migrationMaskSizes: e.MIGRATION_MASK_SIZES,
    mode: e.MODE,
    nodeSyncMode: e.NODE_SYNC_MODE,
    routeTableIds: e.ROUTE_TABLE_IDS,
    queueUrl: e.QUEUE_URL,
    cidrTableName: e.CIDR_TABLE_NAME,
    kube: { auth: e.KUBE_AUTH, eksClusterName: e.EKS_CLUSTER_NAME ?? e.CLUSTER_NAME, secretId: e.KUBE_SECRET_ID },
    webhookSecret: { source: e.WEBHOOK_SECRET_SOURCE, id: e.WEBHOOK_SECRET_ID, signingKeyId: e.WEBHOOK_SIGNING_SECRET_ID },
    maxDeleteShare: e.MAX_DELETE_SHARE ?? DEFAULT_MAX_DELETE_SHARE,
    minDeletesForGuard: e.MIN_DELETES_FOR_GUARD ?? DEFAULT_MIN_DELETES_FOR_GUARD,
    leaseGraceSeconds: e.LEASE_GRACE_SECONDS ?? 600,
    blockedNodeSeconds: e.BLOCKED_NODE_SECONDS ?? 600,
    maxReceiveCount: e.MAX_RECEIVE_COUNT ?? DEFAULT_MAX_RECEIVE_COUNT,
    routeQuota: e.ROUTE_QUOTA ?? DEFAULT_ROUTE_QUOTA,
    nodeSelector: e.NODE_SELECTOR,
    prefixReservationDescription: e.PREFIX_RESERVATION_DESCRIPTION,
    writes: e.WRITES,
  };
}
