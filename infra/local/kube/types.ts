/** The kube emulator's public types: its options, control API and stats. */
import type { AccessState, WebhookConfigurationState } from './authz.ts';
import type { MatchCondition } from './match-conditions.ts';
import type { JsonObject } from './patch.ts';

export type WebhookTarget = {
  /** `https://…` or `http://…` address the AdmissionReview is POSTed to. */
  url: string;
  /** PEM of the CA that signed the webhook's certificate (https only). */
  caPem?: string;
  /**
   * Per call; a slower webhook counts as failed and is ignored (failurePolicy Ignore). The URL
   * carries it as `?timeout=<n>s`, n rounded up to whole seconds (default 10).
   */
  timeoutMs?: number;
};

export type KubeEmulatorOptions = {
  /** Bearer token the server accepts; a random one when absent. */
  token?: string;
  /** Delay before each answer. */
  latencyMs?: number;
  /** Mutating admission webhook called for every Node CREATE. */
  onNodeCreate?: WebhookTarget;
  /**
   * Mutating admission webhook for a Node UPDATE of the main resource (a PUT or PATCH; the status
   * subresource is another resource and never sent), called when all its `matchConditions` are
   * true (./match-conditions.ts; an unsupported expression fails the emulator's start).
   */
  onNodeUpdate?: WebhookTarget & { matchConditions?: MatchCondition[] };
  /** Admission webhook called for every Node DELETE. */
  onNodeDelete?: WebhookTarget;
  /** Nodes present at start (admission is not run for them). */
  nodes?: object[];
  /** Listen port on 127.0.0.1 (0, the default, picks a free one). */
  port?: number;
  /**
   * How long a list continue token stays valid (default 5 minutes). A token expires after a short
   * time, 5 minutes by default, with 410 Gone (Kubernetes docs, "API Concepts: Retrieving large
   * results sets in chunks"); the server's tokens die with etcd compaction, which kube-apiserver runs
   * every `--etcd-compaction-interval` (default 5m). Tests set it small.
   */
  continueTtlMs?: number;
  /**
   * Share (0..1) of node DELETEs that, once the podroute webhook admitted them, are refused as a
   * later validating webhook would refuse them: that webhook's Status (`denyDeleteStatus`) and the
   * node stays. Deterministic per `seed`.
   */
  denyDeletes?: number;
  /**
   * The Status the later webhook answers with (default: a message and no code, so 400). Its code,
   * reason and message reach the client as `ToStatusErr` words them (api-error.ts `webhookDenied`).
   */
  denyDeleteStatus?: { code?: number; reason?: string; message?: string };
  /** Namespaces that exist besides default, kube-system, kube-public and kube-node-lease. */
  namespaces?: string[];
  /** Seed of the `denyDeletes` draw (default 1). */
  seed?: number;
  /** Clock of continue-token expiry (default Date.now). */
  now?: () => number;
};

/** Makes the next matching requests fail. `match` is a stats key such as `PATCH /api/v1/nodes/{name}/status`. */
export type Failure =
  /**
   * `retryAfterSeconds` adds a Retry-After header (a 429 of API Priority and Fairness carries one).
   * A 409 injected on a PATCH without a resourceVersion is not answered: the API server retries such
   * a patch on conflict itself (apiserver endpoints/handlers `patchResource`), so it goes through.
   */
  | { kind: 'error'; code?: number; times?: number; match?: string; retryAfterSeconds?: number }
  | { kind: 'emptyList'; times?: number }
  /** The next `times` list requests that carry a continue token find it expired (410). */
  | { kind: 'expireContinue'; times?: number };

export type StatusObject = {
  kind: 'Status';
  apiVersion: 'v1';
  /** `continue` set on an expired list: the inconsistent token that goes on from where it stopped. */
  metadata: JsonObject;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: JsonObject;
  code: number;
};

export type WebhookCall = { operation: 'CREATE' | 'UPDATE' | 'DELETE'; name: string; ok: boolean; allowed?: boolean; error?: string };

export type KubeEmulatorState = {
  /**
   * Creates a node as its kubelet's `POST /api/v1/nodes` would (admission included unless
   * `admit: false`; NodeRestriction applies; manager `kubelet`).
   */
  addNode(node: object, options?: { admit?: boolean }): Promise<JsonObject>;
  /** Deletes a node as an admin's `DELETE /api/v1/nodes/{name}` would; false when there was none. */
  deleteNode(name: string, options?: { admit?: boolean }): Promise<boolean>;
  /** The bearer token of the kubelet of node `name` (`system:node:<name>`, group `system:nodes`). */
  kubeletToken(name: string): string;
  getNode(name: string): JsonObject | undefined;
  /** Replaces a stored node as is (no validation, no admission): for malformed-data tests. */
  putRawNode(node: object): void;
  nodes(): JsonObject[];
  /** Events from both `/api/v1` and `/apis/events.k8s.io/v1`, in creation order. */
  events(): JsonObject[];
  webhookCalls(): WebhookCall[];
  /** Every request answered so far (after authentication), in order: stats key, User-Agent, fieldManager. */
  requests(): { key: string; userAgent: string; fieldManager: string | null }[];
  /** Node DELETEs admitted by the webhook and then refused by the `denyDeletes` share, by name. */
  refusedDeletes(): string[];
  setFailure(failure: Failure | null): void;
  resourceVersion(): number;
  /** SelfSubjectAccessReview answers (authz.ts). */
  access: AccessState;
  /** Registered MutatingWebhookConfigurations (authz.ts). */
  webhookConfigurations: WebhookConfigurationState;
};

export type KubeEmulatorStats = {
  /** Calls for one `VERB /path/{template}` key. */
  get(key: string): number;
  all(): Record<string, number>;
  reset(): void;
};

export type KubeConfigOptions = {
  clusters: { name: string; server: string; caData: string; skipTLSVerify: false }[];
  users: { name: string; token: string }[];
  contexts: { name: string; cluster: string; user: string }[];
  currentContext: string;
};

export type KubeEmulator = {
  url: string;
  port: number;
  caPem: string;
  /** The admin's token (system:masters: every request is allowed). */
  token: string;
  /** podroute's token: a user in group `podroute`, allowed only what infra/kubernetes/rbac.yaml grants. */
  podrouteToken: string;
  /** Options for `new KubeConfig().loadFromOptions(...)`: the admin's, or the given token's. */
  kubeConfig(token?: string): KubeConfigOptions;
  /** The same as a kubeconfig YAML document. */
  kubeConfigYaml(token?: string): string;
  state: KubeEmulatorState;
  stats: KubeEmulatorStats;
  close(): Promise<void>;
};
