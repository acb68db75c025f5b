/**
 * Prefixes mode, never schedulable before reachable: reconcile marks a managed node without a
 * NetworkUnavailable condition True until its prefixes are assigned (then node sync writes False).
 */
import { describe, expect, it } from 'vitest';
import { reconcile } from '../../lib/usecases/reconcile.ts';
import { FakeEc2, MemoryNodes, prefixDeps } from './prefix-fakes.ts';

describe('prefixes mode: NetworkUnavailable until the prefixes are assigned', () => {
  it('a joining node whose prefix assignment fails this run is NetworkUnavailable=True, and False once assigned', async () => {
    const ec2 = new FakeEc2();
    ec2.addSubnet('subnet-0', ['10.0.0.0/20', '2600:1f18:1234:0::/64'], [
      { cidr: '10.0.8.0/22', type: 'explicit' },
      { cidr: '2600:1f18:1234:0:8000::/65', type: 'explicit' },
    ]);
    const nodes = new MemoryNodes();
    nodes.add('joining', ec2.addInstance('subnet-0').instanceId);
    const { deps } = prefixDeps(ec2, nodes);
    const assign = ec2.assignPrefix.bind(ec2);
    ec2.assignPrefix = async () => {
      throw new Error('RequestLimitExceeded');
    };

    const refused = await reconcile(deps);
    expect(refused.errors.map((e) => e.step)).toContain('node-sync');
    expect(nodes.networkUnavailable('joining')).toBe('True');

    ec2.assignPrefix = assign;
    const assigned = await reconcile(deps);
    expect(assigned.errors).toEqual([]);
    expect(nodes.networkUnavailable('joining')).toBe('False');
  });
});
