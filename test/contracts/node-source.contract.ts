/**
 * The NodeSource contract (lib/usecases/ports.ts): what the use cases rely on from the Kubernetes
 * side, run against MemoryNodeSource and KubeNodes over the Kubernetes emulator
 * (node-source.contract.test.ts). Nodes are seeded as the kubelet registers them.
 */
import { routesText } from '../support/plane.ts';
import { describe, expect, it } from 'vitest';
import { kubeletNode } from '../../infra/local/kube/kubelet-node.ts';
import { InvalidInputError } from '../../lib/errors.ts';
import { PodCidrConflictError } from '../../lib/kube/kube-errors.ts';
import { podCidrsOf, type Node } from '../../lib/nodes/node.ts';
import { NodeNotFoundError } from '../../lib/usecases/port-errors.ts';
import type { NodeSource } from '../../lib/usecases/ports.ts';

export interface NodeSourceHarness {
  port: NodeSource;
  /** Stores a node object as the API server would (not through the port). */
  store(object: Record<string, unknown>): Promise<void>;
  remove(name: string): Promise<void>;
  /** Reasons of the Warning events recorded for the node. */
  eventReasons(name: string): string[];
}

let index = 0;
const registered = (name: string, podCidrs: string[] = []) => {
  index += 1;
  return kubeletNode({ name, instanceId: `i-${index.toString(16).padStart(17, '0')}`, zone: 'us-east-1a', privateIp: `10.0.0.${index % 250}`, podCidrs, index });
};

const condition = (node: Node) => {
  const found = node.status?.conditions?.find((c) => c.type === 'NetworkUnavailable');
  return found === undefined ? null : { status: found.status, reason: found.reason };
};

export function nodeSourceContract(name: string, make: () => Promise<NodeSourceHarness>): void {
  describe(`NodeSource contract: ${name}`, () => {
    it('lists the stored nodes and reads one; a missing node is a NodeNotFoundError, not retryable', async () => {
      const h = await make();
      await h.store(registered('node-a', ['100.64.1.0/24']));
      await h.store(registered('node-b'));
      expect((await h.port.listNodes()).map((n) => n.metadata.name).sort()).toEqual(['node-a', 'node-b']);
      const a = await h.port.getNode('node-a');
      expect(podCidrsOf(a)).toEqual(['100.64.1.0/24']);
      expect(a.spec?.providerID).toMatch(/^aws:\/\/\/us-east-1a\/i-/);
      const missing = await h.port.getNode('node-z').catch((error: unknown) => error);
      expect(missing).toBeInstanceOf(NodeNotFoundError);
      expect(missing).toMatchObject({ nodeName: 'node-z', retryable: false });
    });

    it('writes the NetworkUnavailable condition as the route controller does, keeping the other conditions; a gone node is `gone`', async () => {
      const h = await make();
      await h.store(registered('node-a'));
      const before = (await h.port.getNode('node-a')).status?.conditions?.map((c) => c.type) ?? [];
      expect(await h.port.setNetworkUnavailable('node-a', true, routesText(true))).toBe('patched');
      expect(condition(await h.port.getNode('node-a'))).toEqual({ status: 'True', reason: 'NoRouteCreated' });
      expect(await h.port.setNetworkUnavailable('node-a', false, routesText(false))).toBe('patched');
      const after = await h.port.getNode('node-a');
      expect(condition(after)).toEqual({ status: 'False', reason: 'RouteCreated' });
      expect(after.status?.conditions?.map((c) => c.type).sort()).toEqual([...before, 'NetworkUnavailable'].sort());
      expect(await h.port.setNetworkUnavailable('node-z', false, routesText(false))).toBe('gone');
    });

    it.each([
      ['one family', ['100.64.2.0/24']],
      ['dual-stack', ['100.64.3.0/24', 'fd00:10:0:3::/64']],
    ])('sets the pod CIDRs of a node without any (%s), once: the same again is `unchanged`, others a PodCidrConflictError', async (_name, cidrs) => {
      const h = await make();
      await h.store(registered('node-a'));
      const read = await h.port.getNode('node-a');
      expect(await h.port.updatePodCidr(read, cidrs)).toBe('patched');
      const stored = await h.port.getNode('node-a');
      expect([stored.spec?.podCIDR, stored.spec?.podCIDRs]).toEqual([cidrs[0], cidrs]);
      expect(await h.port.updatePodCidr(stored, cidrs)).toBe('unchanged');
      await expect(h.port.updatePodCidr(stored, ['100.64.9.0/24'])).rejects.toBeInstanceOf(PodCidrConflictError);
      // A stale read (taken before the write): the stored CIDRs decide; the same ones are a no-op patch.
      expect(await h.port.updatePodCidr(read, cidrs)).toBe('patched');
      await expect(h.port.updatePodCidr(read, ['100.64.9.0/24'])).rejects.toBeInstanceOf(PodCidrConflictError);
      expect(podCidrsOf(await h.port.getNode('node-a'))).toEqual(cidrs);
    });

    it('a pod CIDR write to a node that is gone is `gone`', async () => {
      const h = await make();
      await h.store(registered('node-a'));
      const read = await h.port.getNode('node-a');
      await h.remove('node-a');
      expect(await h.port.updatePodCidr(read, '100.64.4.0/24')).toBe('gone');
    });

    it.each<[string, string[]]>([
      ['no CIDR', []],
      ['three CIDRs', ['100.64.5.0/24', 'fd00::/64', '100.64.6.0/24']],
      ['two of one family', ['100.64.5.0/24', '100.64.6.0/24']],
      ['not a CIDR', ['pods']],
    ])('refuses %s with an InvalidInputError and writes nothing', async (_name, cidrs) => {
      const h = await make();
      await h.store(registered('node-a'));
      await expect(h.port.updatePodCidr(await h.port.getNode('node-a'), cidrs)).rejects.toBeInstanceOf(InvalidInputError);
      expect(podCidrsOf(await h.port.getNode('node-a'))).toEqual([]);
    });

    it('records a Warning event on the node', async () => {
      const h = await make();
      await h.store(registered('node-a'));
      await h.port.warn('node-a', 'PodCidrMaskMismatch', 'pod CIDR /24 is not the node mask /25');
      expect(h.eventReasons('node-a')).toEqual(['PodCidrMaskMismatch']);
    });

    it('answers copies: changing what was read changes nothing stored', async () => {
      const h = await make();
      await h.store(registered('node-a', ['100.64.7.0/24']));
      const read = await h.port.getNode('node-a');
      read.spec?.podCIDRs?.push('fd00::/64');
      const [listed] = await h.port.listNodes();
      if (listed?.spec) listed.spec.podCIDR = '100.64.8.0/24';
      expect([(await h.port.getNode('node-a')).spec?.podCIDR, podCidrsOf(await h.port.getNode('node-a'))]).toEqual(['100.64.7.0/24', ['100.64.7.0/24']]);
    });
  });
}
