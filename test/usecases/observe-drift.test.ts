/**
 * lib/usecases/observe.ts `driftOf`: what observe mode counts from a dry run's report, and its
 * `observe.drift` line and gauges.
 */
import { describe, expect, it } from 'vitest';
import { memoryLogger } from '../../lib/log.ts';
import { syncNodeMessage } from '../../lib/messages/work-message.ts';
import { driftOf, reportDrift } from '../../lib/usecases/observe.ts';
import type { ReconcileReport } from '../../lib/usecases/reconcile.ts';

const route = (cidr: string) => ({ routeTableId: 'rtb-0123456789abcdef0', destinationCidr: cidr, node: 'a', instanceId: 'i-0123456789abcdef0' });

/** A report with only what driftOf reads. */
function report(parts: { plan?: Partial<ReconcileReport['plan']>; withheld?: number; planned?: ReconcileReport['planned'] }): ReconcileReport {
  const plan = { create: [], replace: [], delete: [], nodes: [], ...parts.plan } as ReconcileReport['plan'];
  const withheld = Array.from({ length: parts.withheld ?? 0 }, () => ({ kind: 'delete', routeTableId: 'rtb-0123456789abcdef0', destinationCidr: '10.0.9.0/24', why: 'mass-deletion-guard' }));
  return { plan, withheld, ...(parts.planned ? { planned: parts.planned } : {}) } as unknown as ReconcileReport;
}

describe('driftOf', () => {
  it.each<[string, ReconcileReport, ReturnType<typeof driftOf>]>([
    [
      'a writing run (no planned writes): the plan\'s condition patches only',
      report({ plan: { create: [route('10.0.1.0/24')], nodes: [{ node: 'b', networkUnavailable: true, patch: true }] } }),
      { routesCreate: 1, routesReplace: 0, routesDelete: 0, routesWithheld: 0, nodesPatch: 1, leasesWrite: 0, messages: 0 },
    ],
    ['a converged cluster', report({ planned: { messages: [], nodeSync: [], occupy: [], conditions: [], reclaim: [] } }), { routesCreate: 0, routesReplace: 0, routesDelete: 0, routesWithheld: 0, nodesPatch: 0, leasesWrite: 0, messages: 0 }],
    [
      'routes, conditions and a node sync of the same node (counted once), adoptions, a reclaim and an allocation',
      report({
        plan: {
          create: [route('10.0.1.0/24')],
          replace: [{ ...route('10.0.2.0/24'), reason: 'moved' }],
          delete: [{ routeTableId: 'rtb-0123456789abcdef0', destinationCidr: '10.0.9.0/24', reason: 'no-owner', expect: { instanceId: null, blackhole: false } }],
          nodes: [{ node: 'b', networkUnavailable: true, patch: true }, { node: 'c', networkUnavailable: false, patch: false }],
        },
        withheld: 1,
        planned: {
          messages: [syncNodeMessage('b')],
          nodeSync: [{ node: 'b', outcome: 'sync', actions: [{ kind: 'allocate', set: 0 }, { kind: 'patchPodCidrs', cidrs: [] }, { kind: 'setNetworkUnavailable', unavailable: false }] }],
          occupy: [{ node: 'd', cidr: '10.0.4.0/24' }, { node: 'e', cidr: '10.0.5.0/24' }],
          conditions: [{ node: 'b', networkUnavailable: true }, { node: 'g', networkUnavailable: false }],
          reclaim: [{ cidr: '10.0.6.0/24', owner: 'gone' }],
        },
      }),
      { routesCreate: 1, routesReplace: 1, routesDelete: 1, routesWithheld: 1, nodesPatch: 2, leasesWrite: 4, messages: 1 },
    ],
    [
      'a node sync that only warns writes no node and no lease',
      report({ planned: { messages: [], nodeSync: [{ node: 'f', outcome: 'sync', actions: [{ kind: 'warn', reason: 'CloudCIDRAllocatorMismatch', message: 'm' }] }], occupy: [], conditions: [], reclaim: [] } }),
      { routesCreate: 0, routesReplace: 0, routesDelete: 0, routesWithheld: 0, nodesPatch: 0, leasesWrite: 0, messages: 0 },
    ],
  ])('%s', (_what, input, drift) => {
    expect(driftOf(input)).toEqual(drift);
  });

  it('reports one observe.drift line and the five gauges', () => {
    const log = memoryLogger();
    reportDrift({ routesCreate: 2, routesReplace: 0, routesDelete: 1, routesWithheld: 0, nodesPatch: 3, leasesWrite: 4, messages: 3 }, log);
    expect(log.lines.filter((line) => line.event === 'observe.drift')).toMatchObject([{ routesCreate: 2, routesDelete: 1, nodesPatch: 3, leasesWrite: 4, messages: 3 }]);
    const gauge = (name: string) => log.lines.filter((line) => name in line).map((line) => line[name]);
    expect(['DriftRoutesCreate', 'DriftRoutesReplace', 'DriftRoutesDelete', 'DriftNodesPatch', 'DriftLeasesWrite'].map(gauge)).toEqual([[2], [0], [1], [3], [4]]);
  });
});
