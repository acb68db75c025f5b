/**
 * Reconcile's route deletions (lib/usecases/reconcile-route-work.ts) against the guard's window in
 * dynalite: deletions the guard let go are spent only once the window is written, and when that
 * write loses to an overlapping run or fails, what was withheld is said (the count reconcile's
 * DeletionsWithheld metric reports, and the decided plan's `unsafe`). The planner leaves `unsafe`
 * to this guard.
 */
import { DeleteTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DynamoDbDeletionWindow } from '../../lib/aws/dynamodb-deletion-guard.ts';
import { memoryLogger } from '../../lib/log.ts';
import { planRoutes, planRoutesCounted } from '../../lib/routes/route-plan.ts';
import { settleRouteWork } from '../../lib/usecases/reconcile-route-work.ts';
import type { RouteWorkFacts } from '../../lib/routes/route-work.ts';
import type { RouteTable } from '../../lib/routes/route-tables.ts';
import type { Node } from '../../lib/nodes/node.ts';
import type { DeletionWindowStore } from '../../lib/usecases/ports.ts';
import { node, tables } from '../routes/fixtures.ts';
import { startDynalite, type LocalDynamo } from '../support/dynalite.ts';
import { freshCidrTable } from '../support/world.ts';

let local: LocalDynamo;
let client: DynamoDBClient;
beforeAll(async () => {
  local = await startDynalite();
  client = local.client();
});
afterAll(async () => {
  await local.close();
});

const TAG = { 'kubernetes.io/cluster/c1': 'owned' };
const limits = { maxDeleteShare: 0.5, minDeletesForGuard: 5 };

/** The decider's facts with no lease, keyed read or full table: every deletion is unconfirmed. */
const facts = (nodes: Node[], routeTables: RouteTable[]): Omit<RouteWorkFacts, 'guard'> => ({
  tables: routeTables,
  now: 1_000_000,
  backing: { nodes, leases: [], presence: new Map(), graceMs: 600_000 },
  limits,
});

/** 20 nodes routed in rtb-1, and one route of a node no listing or lease names: a `no-owner` deletion. */
function world() {
  const nodes = Array.from({ length: 20 }, (_, i) => node(`n-${i}`, { instance: i + 1, podCidrs: [`100.64.${i}.0/24`] }));
  const routes = nodes.map((_, i) => ({ to: `100.64.${i}.0/24`, instance: i + 1 }));
  const routeTables = tables({ id: 'rtb-1', tags: TAG, routes: [...routes, { to: '100.64.99.0/24', instance: 99 }] });
  return { nodes, routeTables };
}

/** The window store of a run that another run overtakes between its read and its write. */
async function overtaken(how: 'overlapping run' | 'PutItem fails'): Promise<DeletionWindowStore> {
  const tableName = await freshCidrTable(client);
  const store = new DynamoDbDeletionWindow({ client, tableName });
  const other = new DynamoDbDeletionWindow({ client, tableName });
  return {
    read: async () => {
      const read = await store.read();
      if (how === 'overlapping run') expect(await other.write({ runs: [{ at: 1, live: 20, deleted: [] }] }, read.version)).toBe(true);
      else await client.send(new DeleteTableCommand({ TableName: tableName }));
      return read;
    },
    write: (window, version) => store.write(window, version),
  };
}

describe('settleRouteWork', () => {
  it.each(['overlapping run', 'PutItem fails'] as const)('when the window write is lost (%s), withholds the deletion and says so', async (how) => {
    const { nodes, routeTables } = world();
    const planned = planRoutesCounted({ nodes, routeTables, clusterCidrs: ['100.64.0.0/16'] });
    expect(planned.plan.delete.map((op) => op.destinationCidr)).toEqual(['100.64.99.0/24']);
    const log = memoryLogger();

    const { work } = await settleRouteWork(planned, facts(nodes, routeTables), { deletionWindow: await overtaken(how), log }, false);
    const { plan } = work;

    expect({ send: work.send.delete, withheld: work.deletionsWithheld }).toEqual({ send: [], withheld: 1 });
    expect(plan.unsafe).toMatch(/guard window (busy|unwritable)/);
    // Still listed, as withheld deletions are (contract 1).
    expect(plan.delete.map((op) => op.destinationCidr)).toEqual(['100.64.99.0/24']);
  });

  it('lets the deletion go once the window is written', async () => {
    const { nodes, routeTables } = world();
    const planned = planRoutesCounted({ nodes, routeTables, clusterCidrs: ['100.64.0.0/16'] });
    const deletionWindow = new DynamoDbDeletionWindow({ client, tableName: await freshCidrTable(client) });
    const { work } = await settleRouteWork(planned, facts(nodes, routeTables), { deletionWindow, log: memoryLogger() }, false);
    const { plan } = work;
    expect({ send: work.send.delete, withheld: work.deletionsWithheld }).toEqual({ send: plan.delete, withheld: 0 });
    expect(plan.unsafe).toBeUndefined();
    expect((await deletionWindow.read()).window.runs.map((run) => run.deleted)).toEqual([['rtb-1|100.64.99.0/24']]);
  });
});

describe('who decides plan.unsafe', () => {
  it('the planner judges a plan alone only for the plan CLI (planRoutes); reconcile\'s plan leaves it to the windowed guard', () => {
    // Every node gone from the listing: 20 no-owner deletions of 20 live routes.
    const { routeTables } = world();
    const input = { nodes: [node('other', { instance: 500, podCidrs: ['100.64.200.0/24'] })], routeTables, clusterCidrs: ['100.64.0.0/16'] };
    expect(planRoutes(input).unsafe).toMatch(/refusing to delete/);
    expect(planRoutesCounted(input).plan.unsafe).toBeUndefined();
  });
});
