/**
 * A route-worker Wiring whose every EC2 call fails as throttled (retryable), over a real queue:
 * what the worker does with a failure it may retry, through the queue's redrive.
 */
import type { Wiring } from '../../functions/wiring.ts';
import { loadConfig } from '../../lib/config.ts';
import { PodrouteError } from '../../lib/errors.ts';
import type { WorkQueue } from '../../lib/usecases/ports.ts';
import { routesWorkerPlane } from './plane.ts';

export function throttledWorkerWiring(queue: WorkQueue, log: Wiring['log']): Wiring {
  const throttled = async (): Promise<never> => {
    throw new PodrouteError('EC2: RequestLimitExceeded (retryable)', { retryable: true });
  };
  return {
    config: loadConfig({ CLUSTER_NAME: 'c', CLUSTER_CIDRS: '10.244.0.0/16', MAX_RECEIVE_COUNT: '3' }),
    routeTables: { listRouteTables: throttled, createRoute: throttled, replaceRoute: throttled, deleteRoute: throttled, describeRoute: throttled },
    routeTargets: { prepareRouteTarget: throttled },
    nodes: {},
    plane: routesWorkerPlane(),
    queue,
    log,
    now: () => 0,
    // The queue's visibility backoff of 2 s, scaled to 0 (visible again at once).
    timeScale: 100,
  } as unknown as Wiring;
}
