/**
 * The node webhook's use case: act on a node's join or departure at once, not at the next tick.
 * Admission CREATE of a new node, or the UPDATE that first sets a node's providerID (its join under
 * an external cloud controller manager), allocates its pod CIDRs (answered as a JSON Patch) or
 * checks its claim (lib/webhook/claims.ts), and queues a `sync-node` message; any other UPDATE is
 * allowed untouched; admission DELETE queues a delayed `node-left` check (./node-left.ts). A failure
 * admits the node without pod CIDRs, for the schedule to repair, with one exception: a pod CIDR
 * claim the claim census (./claim-census.ts) must hold before the node is stored, and could not
 * record, denies the node (the kubelet retries its registration).
 */
import { conditionText } from '../dataplane/data-plane.ts';
import { formatCidr, overlapsText, tryParseCidr } from '../cidr/cidr.ts';
import { rfc3339 } from '../util/time.ts';
import { PodrouteError } from '../errors.ts';
import { nodeLeftMessage, syncNodeMessage } from '../messages/work-message.ts';
import type { Admitted } from '../messages/work-message.ts';
import { instanceIdOf, parseNode, podCidrsOf } from '../nodes/node.ts';
import type { Node } from '../nodes/node.ts';
import { unmanagedReason } from '../nodes/managed-node.ts';
import type { DualStackKubeNodes } from '../nodesync/index.ts';
import { admissionDenial, admissionResponse, isProviderIdJoin, networkUnavailablePatch, podCidrPatch } from '../webhook/index.ts';
import { claimantOf, heldClaims, instanceHolderOf, judgeClaims, refusalMessage, sharedInstanceMessage, type LeasedSet } from '../webhook/claims.ts';
import type { AdmissionReview, AdmissionReviewResponse, JsonPatchOp, NodeEvent } from '../webhook/index.ts';
import { NodeNotFoundError } from './port-errors.ts';
import { ClaimNotRecordedError, admissionReads, readCensus, recordClaim } from './claim-census.ts';
import { DepartedBlockHeldError, NODE_LEFT_CHECK_DELAY_SECONDS, releaseIfGone } from './node-left.ts';
import { nodeSyncKube } from './node-sync-ports.ts';
import type { LeaseTable } from '../routes/index.ts';
import type { ReconcileDeps } from './reconcile.ts';

/**
 * The webhook runs over the same ports as reconcile; a `NodeLeft` event also looks in the
 * registered pod ranges' sets when the wiring has them (./node-left.ts).
 */
type WebhookDeps = Omit<ReconcileDeps, 'concurrency'>;

/**
 * Answers an admission review. With `deadline`, the answer comes when it aborts at the latest: a
 * node being created is then allowed with NetworkUnavailable=True and nothing else. Work still
 * under way is aborted through the adapters' signal (the caller runs this inside its scope,
 * lib/util/abort-scope.ts), and a lease it took stays with the node's name: the node, stored
 * without pod CIDRs, gets that same block at its next node sync (the allocator answers a node's
 * own lease), and a node never stored loses it to the reclaim once a keyed read confirms it
 * absent (./lease-upkeep.ts).
 */
export async function admit(review: AdmissionReview, deps: WebhookDeps, deadline?: AbortSignal): Promise<AdmissionReviewResponse> {
  const request = review.request;
  if (request.dryRun === true) return admissionResponse(request.uid);
  const decided: Decided = { unavailable: [] };
  try {
    return await beforeDeadline(admitRequest(request, deps, decided), deadline);
  } catch (error) {
    const late = error instanceof AdmissionDeadlineError;
    if (error instanceof ClaimNotRecordedError || decided.claimPending !== undefined) return deny(request, error, deps, decided.claimPending);
    deps.log.log('error', late ? 'webhook.deadline' : 'webhook.failed', { uid: request.uid, node: request.name, operation: request.operation, error });
    deps.log.metric('WebhookFailures', 1);
    // Whatever failed, a node being created stays unschedulable until it is routed.
    const warning = late ? 'podroute ran out of time on this node; its next reconcile acts on it' : 'podroute could not act on this node now; its next reconcile will';
    return admissionResponse(request.uid, decided.unavailable, [warning]);
  }
}

/**
 * What an admission has decided while it runs, for its answer if it fails: the condition a new
 * node is created with, and the claim it is recording (set until the claim census holds it).
 */
interface Decided {
  unavailable: JsonPatchOp[];
  claimPending?: string;
}

/**
 * Denies a node whose claim was not recorded, failed or still pending at the deadline: a node
 * stored with a claim the census does not hold could be handed out to the next node admitted by key.
 */
function deny(request: AdmissionReview['request'], error: unknown, deps: WebhookDeps, pending: string | undefined): AdmissionReviewResponse {
  const message = error instanceof ClaimNotRecordedError ? error.message : `node ${request.name}: podroute could not record its pod CIDR claim ${pending ?? ''} in time`;
  deps.log.log('error', 'webhook.denied', { uid: request.uid, node: request.name, operation: request.operation, error });
  deps.log.metric('WebhookDenied', 1);
  return admissionDenial(request.uid, `${message}; the node is refused so that its registration is retried`);
}

async function admitRequest(request: AdmissionReview['request'], deps: WebhookDeps, decided: Decided): Promise<AdmissionReviewResponse> {
  if (request.operation === 'CREATE') {
    const node = parseNode(request.object);
    const unmanaged = unmanagedReason(node, deps.config.nodeSelector);
    if (unmanaged !== null) {
      // Not podroute's node (Fargate, another node group, no providerID yet): nothing to allocate;
      // a pod CIDR it comes with is held like any node's (lib/routes/ownership.ts), so it is recorded.
      if (podCidrsOf(node).length > 0) await holdClaim(node.metadata.name, podCidrsOf(node), deps, decided);
      deps.log.log('info', 'webhook.admitted', { node: node.metadata.name, operation: 'CREATE', unmanaged });
      return admissionResponse(request.uid);
    }
    // Decided before any read: whatever fails from here on, a new node is created unschedulable.
    decided.unavailable = networkUnavailablePatch(node, rfc3339(deps.now()), conditionText(deps.plane, 'pending'));
    if (await nodeExists(node.metadata.name, deps)) {
      // A kubelet's CREATE on restart: the server answers AlreadyExists after admission (so the
      // patch changes nothing), and the stored node is reconcile's. Nothing to allocate or queue.
      deps.log.log('info', 'webhook.admitted', { node: node.metadata.name, operation: 'CREATE', exists: true });
      return admissionResponse(request.uid, decided.unavailable);
    }
    return await admitNewNode(request.uid, node, decided, deps, 'CREATE');
  }
  if (request.operation === 'UPDATE') return await admitUpdate(request, deps, decided);
  const node = parseNode(request.oldObject);
  await deps.queue.send([nodeLeftMessage(node.metadata.name)], { delaySeconds: NODE_LEFT_CHECK_DELAY_SECONDS });
  deps.log.log('info', 'webhook.admitted', { node: node.metadata.name, operation: 'DELETE', check: 'node-left', delaySeconds: NODE_LEFT_CHECK_DELAY_SECONDS });
  return admissionResponse(request.uid);
}

/**
 * An UPDATE is the join of a node whose providerID the cloud controller manager sets after the
 * kubelet's CREATE (which the CREATE path left alone: `no-provider-id`); it gets what a CREATE
 * gets, except the condition: an update of the main resource keeps the stored status (k8s
 * pkg/registry/core/node/strategy.go, PrepareForUpdate), so the worker settles it. Any other
 * UPDATE that sets a stored node's pod CIDRs (Kubernetes lets spec.podCIDR go from empty to set
 * once) is judged like a CREATE's claim: an unleased block is recorded in the claim census before
 * the answer, or the UPDATE is denied. Any other UPDATE is allowed untouched.
 */
async function admitUpdate(request: AdmissionReview['request'], deps: WebhookDeps, decided: Decided): Promise<AdmissionReviewResponse> {
  if (!isProviderIdJoin(request)) return await admitPodCidrsSet(request, deps, decided);
  const node = parseNode(request.object);
  const unmanaged = unmanagedReason(node, deps.config.nodeSelector);
  if (unmanaged !== null) {
    deps.log.log('info', 'webhook.admitted', { node: node.metadata.name, operation: 'UPDATE', unmanaged });
    return admissionResponse(request.uid);
  }
  // An update's condition is the stored one (see above): `decided.unavailable` stays empty.
  return await admitNewNode(request.uid, node, decided, deps, 'UPDATE');
}

/**
 * An UPDATE giving a stored node pod CIDRs it had none of: its own lease (podroute's patch of the
 * block it leased) records nothing; any unleased block is held in the claim census, so a keyed
 * admission after it keeps out of that block. Nothing is patched or queued: reconcile routes it.
 */
async function admitPodCidrsSet(request: AdmissionReview['request'], deps: WebhookDeps, decided: Decided): Promise<AdmissionReviewResponse> {
  if (request.oldObject === undefined || request.object === undefined) return admissionResponse(request.uid);
  const node = parseNode(request.object);
  if (podCidrsOf(parseNode(request.oldObject)).length > 0 || podCidrsOf(node).length === 0) return admissionResponse(request.uid);
  const verdict = judgeClaims(node, await leasedSets(deps));
  if (verdict.kind !== 'refused') return admissionResponse(request.uid);
  const unverified = verdict.refused.filter((c) => c.reason === 'unverified').map((c) => c.cidr);
  if (unverified.length > 0) await holdClaim(node.metadata.name, unverified, deps, decided);
  deps.log.log('info', 'webhook.admitted', { node: node.metadata.name, operation: 'UPDATE', podCidrs: podCidrsOf(node), recorded: unverified });
  return admissionResponse(request.uid, [], verdict.refused.map((claim) => refusalMessage(node.metadata.name, claim)));
}

/** An admission that was still at work when its deadline came. */
class AdmissionDeadlineError extends PodrouteError {
  override name = 'AdmissionDeadlineError';
}

/** `work`'s outcome, or an AdmissionDeadlineError as soon as `deadline` aborts (work goes on, aborted by its adapters). */
function beforeDeadline<T>(work: Promise<T>, deadline: AbortSignal | undefined): Promise<T> {
  if (deadline === undefined) return work;
  return new Promise<T>((resolve, reject) => {
    const late = () => reject(new AdmissionDeadlineError('the admission deadline passed', { retryable: true }));
    if (deadline.aborted) late();
    deadline.addEventListener('abort', late, { once: true });
    const done = () => deadline.removeEventListener('abort', late);
    work.then(
      (value) => (done(), resolve(value)),
      (error: unknown) => (done(), reject(error)),
    );
  });
}

/**
 * A managed node joining: not stored yet (CREATE), or stored until now without its providerID
 * (UPDATE). It comes with pod CIDRs: they are judged against the leases (lib/webhook/claims.ts),
 * never adopted here; only a node's own lease is routed; an unleased one is recorded in the claim
 * census first. It comes without: allocate, and patch the blocks in; by key alone when the census
 * vouches that no stored node carries an unleased block (`admissionReads`), else over the listing.
 * `decided.unavailable` (the condition a CREATE stores) goes into the answer either way.
 */
async function admitNewNode(uid: string, node: Node, decided: Decided, deps: WebhookDeps, operation: 'CREATE' | 'UPDATE'): Promise<AdmissionReviewResponse> {
  const name = node.metadata.name;
  const unavailable = decided.unavailable;
  if (podCidrsOf(node).length > 0) {
    const verdict = judgeClaims(node, await leasedSets(deps));
    // An unleased claim, stored after this answer, is one other admissions must keep out of theirs.
    const unverified = verdict.kind === 'refused' ? verdict.refused.filter((c) => c.reason === 'unverified').map((c) => c.cidr) : [];
    if (unverified.length > 0) await holdClaim(name, unverified, deps, decided);
    if (verdict.kind === 'refused') {
      const warnings = verdict.refused.map((claim) => refusalMessage(name, claim));
      for (const [i, claim] of verdict.refused.entries()) {
        deps.log.log('warn', 'webhook.claim-refused', { node: name, cidr: claim.cidr, reason: claim.reason, ...(claim.reason === 'conflict' ? { owner: claim.owner } : {}), detail: warnings[i] });
      }
      deps.log.metric('ClaimsRefused', verdict.refused.length);
      return admissionResponse(uid, unavailable, warnings);
    }
    const warnings = await queueAdmitted(node, [], await deps.nodes.listNodes(), deps);
    deps.log.log('info', 'webhook.admitted', { node: name, operation, podCidrs: verdict.cidrs, leased: true });
    return admissionResponse(uid, unavailable, warnings);
  }
  const reads = admissionReads({ census: await readCensus(deps.claimCensus, deps.log), now: deps.now(), workerJudgesInstance: deps.plane.workerJudgesInstance });
  // Keyed: no stored node carries an unleased block, so the lease table alone decides what is free.
  const others = reads === 'keyed' ? null : await deps.nodes.listNodes();
  const cidrs = others === null ? await allocateOnce(node, deps) : await allocateForNewNode(node, others, deps);
  const warnings = await queueAdmitted(node, cidrs, others, deps);
  deps.log.log('info', 'webhook.admitted', { node: name, operation, podCidrs: cidrs, reads });
  return admissionResponse(uid, [...(cidrs.length > 0 ? podCidrPatch(node, cidrs) : []), ...unavailable], warnings);
}

/**
 * Records `cidrs`, claimed by node `name` without a lease, in the claim census before the answer;
 * `decided.claimPending` names them while the write is under way, so a deadline meanwhile denies.
 */
async function holdClaim(name: string, cidrs: readonly string[], deps: WebhookDeps, decided: Decided): Promise<void> {
  decided.claimPending = cidrs.join(', ');
  await recordClaim(deps.claimCensus, name, cidrs, deps.now());
  delete decided.claimPending;
}

/**
 * Queues a new node's routes with what it is admitted with, unless a stored node names the same
 * instance: that one came first and keeps its routes, so the new node waits for reconcile (no
 * `admitted`) and the answer warns. Without a listing (`others` null) the worker's and reconcile's
 * ownership decider, on fresh reads, judge a shared instance. Returns the admission's warnings.
 */
async function queueAdmitted(node: Node, allocated: readonly string[], others: readonly Node[] | null, deps: WebhookDeps): Promise<string[]> {
  const name = node.metadata.name;
  const admitted = admittedOf(node, allocated);
  const holder = admitted === undefined || others === null ? null : instanceHolderOf(admitted.instanceId, others, name);
  if (admitted === undefined || holder === null) {
    await queueNodeSync(name, deps, admitted);
    return [];
  }
  const message = sharedInstanceMessage(name, admitted.instanceId, holder);
  deps.log.log('warn', 'webhook.instance-shared', { node: name, instanceId: admitted.instanceId, holder, detail: message });
  await queueNodeSync(name, deps);
  return [message];
}

/** A keyed read: does a node of this name exist? (404 = no; any other failure rejects.) */
async function nodeExists(name: string, deps: WebhookDeps): Promise<boolean> {
  try {
    await deps.nodes.getNode(name);
    return true;
  } catch (error) {
    if (error instanceof NodeNotFoundError) return false;
    throw error;
  }
}

/** The leases a claim is judged against: the plane's sets (the cluster CIDRs', or the pod ranges'). */
async function leasedSets(deps: WebhookDeps): Promise<LeasedSet[]> {
  const sets = await deps.plane.leaseSets();
  return Promise.all(sets.map(async (set) => ({ clusterCidr: set.clusterCidr, leases: await set.leases() })));
}

/** The lease table the ownership decider reads, over the same sets as `leasedSets`. */
async function leaseTableOf(deps: WebhookDeps): Promise<LeaseTable> {
  const sets = await deps.plane.leaseSets();
  const leases = (await Promise.all(sets.map((set) => set.leases()))).flat();
  const migration = deps.config.migrationMaskSizes;
  return { leases, sets, ...(migration ? { migrationMaskSizes: migration } : {}) };
}

type EventResult = { status: 202 | 404 | 409; message: string };

export async function handleNodeEvent(event: NodeEvent, deps: WebhookDeps): Promise<EventResult> {
  if (event.type === 'NodeJoined') {
    let node: Node;
    try {
      node = await deps.nodes.getNode(event.nodeName);
    } catch (error) {
      if (error instanceof NodeNotFoundError) return { status: 404, message: `node ${event.nodeName} not found` };
      throw error;
    }
    const unmanaged = unmanagedReason(node, deps.config.nodeSelector);
    if (unmanaged !== null) return { status: 202, message: `node ${event.nodeName} is not podroute's (${unmanaged}); nothing to do` };
    const claim = await unverifiedClaim(node, deps);
    if (claim !== null) {
      deps.log.log('warn', 'webhook.join-deferred', { node: event.nodeName, detail: claim });
      return { status: 202, message: `${claim}; reconcile decides on it, nothing was synced now` };
    }
    await syncOne(node, deps, nodeSyncKube(deps));
    await queueNodeSync(node.metadata.name, deps);
    return { status: 202, message: `node ${event.nodeName} synced; its routes are queued` };
  }
  const result = await releaseIfGone(event.nodeName, {
    ...deps,
    leaseSets: () => deps.plane.leaseSets(),
    freeDepartedBlock: (cidr, owner) => deps.plane.freeDepartedBlock(cidr, owner),
    leaseGraceSeconds: deps.config.leaseGraceSeconds });
  if (result.kind === 'exists') return { status: 409, message: `node ${event.nodeName} still exists; NodeLeft is accepted once it is deleted` };
  // Retryable (503): the sender repeats the event until the cloud side has let go of the block.
  if (result.held.length > 0) throw new DepartedBlockHeldError(event.nodeName, result.held);
  // Its routes are the planner's to delete (next reconcile, under the mass-deletion guard).
  return { status: 202, message: `node ${event.nodeName}: released ${result.cidrs.length} pod CIDR(s)` };
}

/**
 * Why a stored node's pod CIDRs are not for a `NodeJoined` sync, or null when they are: none, or
 * each exactly a block leased to the node. Node sync would occupy any other claim for the node
 * (every block a wide range overlaps), so it waits for reconcile, which alone adopts, under the
 * ownership decider's rules.
 */
async function unverifiedClaim(node: Node, deps: WebhookDeps): Promise<string | null> {
  if (podCidrsOf(node).length === 0) return null;
  const verdict = judgeClaims(node, await leasedSets(deps));
  if (verdict.kind === 'own') return null;
  const [first] = verdict.refused;
  const cidr = first?.cidr ?? '';
  return `node ${node.metadata.name}: pod CIDR ${JSON.stringify(cidr.slice(0, 64))} is not leased to it (${first?.reason ?? 'unverified'})`;
}

/**
 * Allocates pod CIDRs for a node being created; returns them. A block another node carries without
 * a lease (written by someone else since reconcile last adopted what it listed) is never handed
 * out when reconcile could adopt it for that node (lib/webhook/claims.ts, `heldClaims`): it is
 * given back and the next one taken. A claim nobody can get (a conflict) holds no block.
 */
async function allocateForNewNode(node: Node, others: readonly Node[], deps: WebhookDeps): Promise<string[]> {
  const name = node.metadata.name;
  // Read before allocating: the new node's own candidate lease must not turn a claim into a conflict.
  const held = heldClaims(others, await leaseTableOf(deps), deps.config.clusterCidrs, deps.config.nodeSelector);
  for (let round = 0; round <= MAX_CLAIMED_SKIPS; round += 1) {
    const cidrs = await allocateOnce(node, deps);
    const claimed = cidrs.map((cidr) => ({ cidr, by: claimantOf(cidr, held, name) })).filter((c) => c.by !== null);
    if (claimed.length === 0) return cidrs;
    for (const { cidr, by } of claimed) {
      deps.log.log('warn', 'webhook.candidate-claimed', { node: name, cidr, carrier: by });
      const set = deps.cidrSets.find((s) => overlapsText(s.clusterCidr, cidr));
      await set?.release(cidr, name);
    }
  }
  throw new PodrouteError(`node ${name}: ${MAX_CLAIMED_SKIPS + 1} blocks in a row are carried by other nodes without a lease; reconcile adopts them first`);
}

/** Blocks skipped per admission because other nodes carry them; past that, reconcile allocates. */
const MAX_CLAIMED_SKIPS = 8;

/** One node sync for a node being created, its pod CIDRs captured for the admission patch. */
async function allocateOnce(node: Node, deps: WebhookDeps): Promise<string[]> {
  const captured: string[] = [];
  const kube: DualStackKubeNodes = {
    ...nodeSyncKube(deps),
    // The node is not stored yet: the admission patch writes its pod CIDRs.
    updatePodCidr: async (_node, cidrs) => {
      captured.push(...cidrs);
    },
    setNetworkUnavailable: async () => undefined,
  };
  await deps.plane.admitNewNode(node, kube);
  return captured;
}

/**
 * Queues the node's `sync-node` for the worker, at once, when the plane wants one (its routes; or
 * an admitted node's condition, which waits for the stored node); `admitted` when the node is not
 * stored yet.
 */
async function queueNodeSync(name: string, deps: WebhookDeps, admitted?: Admitted): Promise<void> {
  if (!deps.plane.queuesSyncNode(admitted)) return;
  await deps.queue.send([syncNodeMessage(name, admitted)], { delaySeconds: 0 });
}

/**
 * What the admission knows of a node about to be stored: its instance and its pod CIDRs (those it
 * came with and the ones just allocated for the patch); undefined when it has no instance id or
 * no pod CIDR, and the worker then waits for the stored node.
 */
function admittedOf(node: Node, allocated: readonly string[]): Admitted | undefined {
  const instanceId = instanceIdOf(node);
  const parsed = [...podCidrsOf(node), ...allocated].map((text) => tryParseCidr(text)).filter((c) => c !== null);
  const cidrs = [...new Set(parsed.map(formatCidr))];
  // More than one per family is no pod CIDR list the API server stores: let the stored node decide.
  return instanceId === null || cidrs.length === 0 || cidrs.length > 2 ? undefined : { instanceId, podCidrs: cidrs };
}

/** Node sync for one node, over the plane's fresh reads of its cloud side. */
async function syncOne(node: Node, deps: WebhookDeps, kube: DualStackKubeNodes): Promise<void> {
  await deps.plane.syncNewNode(node, kube);
}
