import { describe, expect, it } from 'vitest';
import { fargateNode, kubeletNode } from '../../infra/local/kube/kubelet-node.ts';
import { unmanagedReason } from '../../lib/nodes/managed-node.ts';
import { instanceIdOf, networkUnavailableOf, parseNode, podCidrsOf } from '../../lib/nodes/node.ts';

const spec = { name: 'ip-10-0-1-10.ec2.internal', instanceId: 'i-0a1b2c3d4e5f60001', zone: 'us-east-1b', privateIp: '10.0.1.10' };

describe('kubeletNode', () => {
  it('is a real-sized node body (a real kubelet sent 7.9 KB) that podroute reads like a real one', () => {
    const raw = kubeletNode({ ...spec, podCidrs: ['10.244.1.0/24', 'fd00:0:0:1::/64'], networkUnavailable: 'False', index: 3 });
    const size = JSON.stringify(raw).length;
    expect(size).toBeGreaterThanOrEqual(7_000);
    expect(size).toBeLessThanOrEqual(15_000);
    const node = parseNode(raw);
    expect(instanceIdOf(node)).toBe('i-0a1b2c3d4e5f60001');
    expect(podCidrsOf(node)).toEqual(['10.244.1.0/24', 'fd00:0:0:1::/64']);
    expect(networkUnavailableOf(node)).toBe('False');
    expect(unmanagedReason(node)).toBeNull();
    expect(node.metadata.labels?.['topology.kubernetes.io/zone']).toBe('us-east-1b');
    expect(node.metadata.labels?.['topology.kubernetes.io/region']).toBe('us-east-1');
  });

  it('is deterministic, and the index varies what differs between real nodes', () => {
    expect(JSON.stringify(kubeletNode(spec))).toBe(JSON.stringify(kubeletNode(spec)));
    const [a, b] = [kubeletNode({ ...spec, index: 1 }), kubeletNode({ ...spec, index: 2 })];
    const bootId = (n: typeof a) => ((n.status as { nodeInfo: { bootID: string } }).nodeInfo).bootID;
    expect(bootId(a)).not.toBe(bootId(b));
  });

  it('has no pod CIDR fields and no NetworkUnavailable condition until they are given', () => {
    const node = parseNode(kubeletNode(spec));
    expect(node.spec?.podCIDR).toBeUndefined();
    expect(node.spec?.podCIDRs).toBeUndefined();
    expect(networkUnavailableOf(node)).toBeNull();
  });
});

describe('fargateNode', () => {
  it('is registered as EKS does: its providerID names no EC2 instance', () => {
    const node = parseNode(fargateNode({ privateIp: '10.0.1.200', zone: 'us-east-1a' }));
    expect(node.metadata.name).toBe('fargate-ip-10-0-1-200.ec2.internal');
    expect(node.spec?.providerID).toMatch(/^aws:\/\/\/us-east-1a\/[0-9a-f]{10}-[0-9a-f]{32}\/fargate-ip-10-0-1-200\.ec2\.internal$/);
    expect(unmanagedReason(node)).toBe('not-an-ec2-instance');
  });
});
