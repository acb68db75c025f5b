/**
 * Data planes for tests that build their deps by hand, chosen as functions/wiring.ts chooses them.
 */
import { conditionText } from '../../lib/dataplane/data-plane.ts';
import type { ConditionText, DataPlane } from '../../lib/dataplane/data-plane.ts';
import { prefixesPlane } from '../../lib/dataplane/prefixes/prefixes-plane.ts';
import { routesPlane } from '../../lib/dataplane/routes/routes-plane.ts';
import type { RoutesPlanePorts } from '../../lib/dataplane/routes/routes-plane.ts';
import type { CidrSet } from '../../lib/ipam/index.ts';
import { silentLogger } from '../../lib/log.ts';
import type { EniPrefixes } from '../../lib/usecases/ports.ts';

const unused = (): Promise<never> => Promise.reject(new Error('the worker reads this port of no plane'));

/**
 * The routes plane as the route worker uses it: a `sync-node` is `syncNodeRoutes` over the
 * worker's own deps, a failure may find routes missing, and a `node-left` releases in `cidrSets`.
 * Nothing else of it is read there.
 */
export function routesWorkerPlane(cidrSets: CidrSet[] = []): DataPlane {
  return routesPlane({
    config: { clusterCidrs: cidrSets.map((set) => set.clusterCidr), nodeSyncMode: 'SyncFromCluster', maxDeleteShare: 1, minDeletesForGuard: 0 },
    routeTables: { listRouteTables: unused },
    cidrSets,
    interfaces: null,
  });
}

/** Reconcile or webhook deps of routes mode with their plane, over the same ports (`prefixes` reads primary interfaces when present). */
export function withRoutesPlane<T extends Omit<RoutesPlanePorts, 'interfaces'> & { prefixes?: Pick<EniPrefixes, 'describeInterfaces'> }>(deps: T): T & { plane: DataPlane } {
  return { ...deps, plane: routesPlane({ config: deps.config, routeTables: deps.routeTables, cidrSets: deps.cidrSets, interfaces: deps.prefixes ?? null }) };
}

/**
 * The prefixes plane as the route worker uses it: a `sync-node` settles the node's condition on
 * what `prefixes` reads of its interface (an admitted node's missing prefixes would read the lease
 * sets, which are unused here). Nothing else of it is read there.
 */
export function prefixesWorkerPlane(prefixes: EniPrefixes): DataPlane {
  return prefixesPlane({
    config: { clusterCidrs: [], nodeSyncMode: 'SyncFromCluster' },
    prefixes,
    subnets: { describeSubnets: unused },
    reservationSets: unused,
    usedReservationSets: unused,
    nodes: { warn: unused },
    log: silentLogger,
  });
}

/** The routes plane's NetworkUnavailable text for a state (upstream's route controller's words). */
export const routesText = (state: boolean | 'pending'): ConditionText => conditionText(routesWorkerPlane(), state);
