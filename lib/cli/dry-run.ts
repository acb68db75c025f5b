/**
 * The dry run of reconcile: the deployed wiring (functions/wiring.ts `buildWiring`, the data plane
 * of the configured mode) over read-only clients and a read-only node source, and the reconcile use
 * case with `dryRun`, which runs every read and decider of the deployed run and stops before each
 * write. It reads the real lease table, the guard's window and the queue's backlog; it writes none.
 * Also what `podroute doctor` can call to show what the next run would do.
 */
import { buildWiring, useCaseDeps } from '../../functions/wiring.ts';
import { DryRunWriteError, readOnlyClients, readOnlyNodes } from '../aws/read-only-clients.ts';
import type { AwsClients } from '../aws/read-only-clients.ts';
import type { Config } from '../config.ts';
import { silentLogger } from '../log.ts';
import type { Logger } from '../log.ts';
import { reconcile } from '../usecases/reconcile.ts';
import type { ReconcileReport } from '../usecases/reconcile.ts';
import type { NodeSource } from '../usecases/ports.ts';

export { DryRunWriteError, readOnlyNodes } from '../aws/read-only-clients.ts';

/**
 * One reconcile run as deployed, up to its first write. `clients` get a middleware that refuses
 * writes (pass clients of their own); the report's `planned` says what the run would write.
 */
export async function dryRunReconcile(
  config: Config,
  clients: AwsClients,
  nodes: NodeSource,
  options: { log?: Logger; now?: () => number } = {},
): Promise<ReconcileReport> {
  const wiring = await buildWiring(config, readOnlyClients(clients), readOnlyNodes(nodes), () => Promise.reject(new DryRunWriteError('a dry run reads no webhook secret')), {
    log: options.log ?? silentLogger,
    readOnly: true,
    ...(options.now ? { now: options.now } : {}),
  });
  return reconcile(useCaseDeps(wiring), { dryRun: true });
}
