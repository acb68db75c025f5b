/**
 * The help of the commands lib/cli/main.ts loads lazily (reconcile, doctor), in a module that
 * loads no SDK: `podroute <command> --help` prints it without loading the command.
 */
import { DEFAULT_ROUTE_QUOTA, MAX_ROUTE_QUOTA } from '../routes/route-table-headroom.ts';
import { DETAILED_EXITCODE_HELP } from './plan-exit.ts';
import { REGION_HELP } from './region.ts';

/** The identity infra/kubernetes/rbac.yaml binds: group `podroute` (eks-access-entry.sh maps the Lambda roles to it). */
export const DEFAULT_KUBE_USER = 'podroute';
export const DEFAULT_KUBE_GROUPS = 'podroute';

export const RECONCILE_HELP = `Usage: podroute reconcile --dry-run --cluster-name <name> --cluster-cidrs <cidr>[,<cidr>] --cidr-table-name <name> --queue-url <url> [flags]

Runs the deployed reconcile function's code once against a live cluster and AWS account, up to its
first write, and prints the plan (the fields of 'podroute plan') with what the function would send
(send), withhold and why (withheld), node sync's actions (nodeSync) and the pod CIDRs it would adopt
(occupy). Reads the cloud side of the mode, the lease table, the guard's window and the queue's
backlog with the AWS default credential chain, and the nodes with your kubeconfig. Other settings
come from the environment, as the function's do. Changes nothing: every write is refused.

Flags:
  --dry-run                 required: print the plan, change nothing
  --cluster-name <name>     route tables tagged kubernetes.io/cluster/<name> are the cluster's
  --cluster-cidrs <list>    the cluster's pod CIDRs, comma-separated
  --cidr-table-name <name>  the lease table (default: $CIDR_TABLE_NAME)
  --queue-url <url>         the route worker's queue (default: $QUEUE_URL)
  --mode <mode>             routes or prefixes (default: $MODE, else routes)
  --route-table-ids <list>  use these tables instead of the tag
  --node-selector <sel>     only nodes whose labels match are podroute's (default: $NODE_SELECTOR,
                            else every node); kubectl -l syntax
  --kubeconfig <file>       default: $KUBECONFIG or ~/.kube/config
  --context <name>          kubeconfig context (default: its current context)
  --region <region>         default: ${REGION_HELP}
  -o, --output <format>     json (default), yaml or table; --format is the same flag's 0.2 name
  --detailed-exitcode       exit 2 when the plan changes anything (see below)
  -h, --help                this help

${DETAILED_EXITCODE_HELP}`;

export const DOCTOR_HELP = `Usage: podroute doctor --cluster-name <name> --cluster-cidrs <cidr>[,<cidr>] [flags]

Checks, read-only, that an account and cluster are ready for podroute (or still are): in routes
mode the route tables, their room under the route quota and the cluster tag on the managed nodes'
primary network interfaces; in prefixes mode the nodes' subnets, podroute's reservations in each
and the free blocks of each pod range (the CIDR table read, not written); in both the nodes' pod
CIDRs against the mask, which nodes podroute manages, the Kubernetes
permissions of podroute's identity (not yours: SubjectAccessReview, which you need to be allowed
to create), the node admission webhook, the stack's queue and table. One line per check: ok, warn or FAIL. Exit 1 when any
check failed, 2 for bad flags.

Flags:
  --mode <mode>                routes (default) or prefixes, as the stack's mode param (default $MODE)
  --cluster-name <name>        route tables tagged kubernetes.io/cluster/<name> are the cluster's
  --cluster-cidrs <list>       the cluster's pod CIDRs, comma-separated
  --route-table-ids <list>     use these tables instead of the tag
  --node-selector <selector>   the nodes podroute manages (kubectl -l syntax; default $NODE_SELECTOR, empty: all)
  --node-mask-size-ipv4 <n>    routes mode default 24 (must equal kube-controller-manager's --node-cidr-mask-size)
  --node-mask-size-ipv6 <n>    default 64 (prefixes mode: 28 and 80, ENI prefix sizes)
  --node-sync-mode <mode>      SyncFromCluster (default) or SyncFromCloud (default $NODE_SYNC_MODE)
  --route-quota <n>            routes mode: the routes per route table used when Service Quotas (vpc
                               L-93826ACB: applied, then AWS's default) answers none, with a warning
                               (default $ROUTE_QUOTA, else ${DEFAULT_ROUTE_QUOTA}; adjustable up to ${MAX_ROUTE_QUOTA})
  --stack <name>               the deployed CloudFormation stack: checks its function roles' EC2 writes
                               (IAM SimulatePrincipalPolicy, for the role, not you) and its dead-letter
                               queue, and reads its queue and table (default $STACK_NAME)
  --dry-run-writes             routes mode: ask EC2, with DryRun, whether the credentials you run with
                               may create routes in the tables and turn off a node's source/dest check
                               (run with podroute's role to check the role on the real resources)
  --reserved-concurrency <n>   the Lambda concurrency the stack's params reserve, in all: checked against
                               the account's (GetAccountSettings; Lambda keeps 100 unreserved). Default
                               16: reconcileReservedConcurrency 1 + webhookReservedConcurrency 10
                               + cloudEventsReservedConcurrency 5
  --queue-url <url>            the stack's route queue (default $QUEUE_URL, else the stack's; not checked without one)
  --cidr-table-name <name>     the stack's CIDR table (default $CIDR_TABLE_NAME, else the stack's; not checked without one)
  --kube-user <name>           podroute's Kubernetes user name (default $PODROUTE_KUBE_USER, else ${DEFAULT_KUBE_USER})
  --kube-groups <list>         its groups, comma-separated (default $PODROUTE_KUBE_GROUPS, else ${DEFAULT_KUBE_GROUPS}: the
                               group infra/kubernetes/rbac.yaml binds)
  --kubeconfig <file>          default: $KUBECONFIG or ~/.kube/config
  --context <name>             kubeconfig context (default: its current context)
  --region <region>            default: ${REGION_HELP}
  -o, --output <format>        table (default): one line per check; json, yaml: the checks as a
                               list of {status, check, detail}; --format is the same flag's 0.2 name
  -h, --help                   this help
`;
