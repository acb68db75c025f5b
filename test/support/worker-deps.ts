/**
 * The route worker's deps over a test world in routes mode: the world's route tables and targets,
 * nodes and CIDR sets, cluster CIDR 100.64.0.0/16, a 600 s lease grace, a memory logger and the
 * world's clock; `extra` replaces or adds any of them.
 */
import { memoryLogger } from '../../lib/log.ts';
import type { RouteWorkerDeps } from '../../lib/usecases/route-worker.ts';
import { routesWorkerPlane } from './plane.ts';
import type { World } from './world.ts';

export function worldWorkerDeps(world: World, extra: Partial<RouteWorkerDeps> = {}): RouteWorkerDeps {
  return {
    clusterCidrs: ['100.64.0.0/16'],
    routeTables: world.routeTables,
    routeTargets: world.routeTargets,
    nodes: world.nodes,
    cidrSets: world.cidrSets,
    plane: routesWorkerPlane(world.cidrSets),
    leaseGraceSeconds: 600,
    log: memoryLogger(),
    now: world.clock.now,
    ...extra,
  };
}
