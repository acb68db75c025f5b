/**
 * A stand-in for the cloud controller manager's node controller, for nodes that join as under
 * kubeadm's or kOps' default (`kubelet --cloud-provider=external`): the kubelet registers its Node
 * without spec.providerID and with the taint `node.cloudprovider.kubernetes.io/uninitialized`
 * (k8s.io/cloud-provider api, TaintExternalCloudProvider), and the CCM initializes it later: one
 * update of the Node that sets spec.providerID and removes that taint (k8s.io/cloud-provider
 * controllers/node, node_controller.go: the node is read, modified and written with `Update`).
 * That update is what podroute's node-provider-id webhook admits.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiException, type CoreV1Api, type V1Node, type V1Taint } from '@kubernetes/client-node';
import type { Logger } from '../../../lib/log.ts';

export const UNINITIALIZED_TAINT: V1Taint = { key: 'node.cloudprovider.kubernetes.io/uninitialized', value: 'true', effect: 'NoSchedule' };
/** The field manager the CCM's writes are recorded under (its User-Agent's command name). */
const CCM_MANAGER = 'aws-cloud-controller-manager';
/** Attempts of the read-modify-write when another writer changed the node in between (409). */
const MAX_CONFLICTS = 5;

/** The kubelet's registration under an external cloud provider: no providerID, tainted uninitialized. */
export function asExternalCloudProvider(body: V1Node): V1Node {
  const { providerID: _set, ...spec } = body.spec ?? {};
  return { ...body, spec: { ...spec, taints: [...(spec.taints ?? []), { ...UNINITIALIZED_TAINT }] } };
}

export class StandInCcm {
  private readonly pending = new Set<Promise<void>>();
  private stopped = false;

  constructor(
    private readonly api: CoreV1Api,
    private readonly delayMs: number,
    private readonly log: Logger,
  ) {}

  /** Initializes node `name` with `providerId` after the delay; failures are logged, never thrown. */
  initializeLater(name: string, providerId: string): void {
    const run = sleep(this.delayMs)
      .then(() => (this.stopped ? undefined : this.initialize(name, providerId)))
      .catch((error: unknown) => this.log.log('error', 'sandbox.ccm-failed', { node: name, error }))
      .finally(() => this.pending.delete(run));
    this.pending.add(run);
  }

  /** Nodes still waiting for their initialization. */
  waiting(): number {
    return this.pending.size;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.allSettled([...this.pending]);
  }

  private async initialize(name: string, providerId: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const node = await this.api.readNode({ name });
      const taints = (node.spec?.taints ?? []).filter((t) => t.key !== UNINITIALIZED_TAINT.key);
      const spec = { ...node.spec, providerID: providerId, ...(taints.length > 0 ? { taints } : { taints: undefined }) };
      try {
        await this.api.replaceNode({ name, body: { ...node, spec }, fieldManager: CCM_MANAGER });
        return;
      } catch (error) {
        // The node changed since it was read (podroute's condition write, the kubelet): read again.
        if (!(error instanceof ApiException && error.code === 409) || attempt >= MAX_CONFLICTS) throw error;
      }
    }
  }
}
