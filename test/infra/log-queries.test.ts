/**
 * The saved Logs Insights queries of serverless.yml against the lines podroute really writes in
 * Lambda: the route worker, logging through Powertools (lib/log.ts powertoolsTelemetry), writes a
 * node's route against the EC2 and Kubernetes emulators, and each query's `filter` (its node or
 * table filled in) is evaluated over the captured lines. A renamed log field fails here.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { load } from 'js-yaml';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { powertoolsTelemetry } from '../../lib/log.ts';
import type { WorkMessage } from '../../lib/messages/work-message.ts';
import { handleWorkMessage, type RouteWorkerDeps } from '../../lib/usecases/route-worker.ts';
import { startWorld, type World } from '../support/world.ts';
import { routesWorkerPlane } from '../support/plane.ts';
import { captureOutput } from '../support/capture-output.ts';

type Line = Record<string, unknown>;
const isObj = (value: unknown): value is Line => typeof value === 'object' && value !== null && !Array.isArray(value);

const sls: unknown = load(readFileSync(fileURLToPath(new URL('../../serverless.yml', import.meta.url)), 'utf8'));
function queryString(id: string): string {
  const resources = isObj(sls) && isObj(sls.resources) && isObj(sls.resources.Resources) ? sls.resources.Resources : {};
  const resource = resources[id];
  const text = isObj(resource) && isObj(resource.Properties) ? resource.Properties.QueryString : undefined;
  if (typeof text !== 'string') throw new Error(`${id} has no QueryString`);
  return text;
}

/**
 * A predicate for the query's one `filter` command, in the subset the saved queries use:
 * `field = "text"` and `field in ["a", "b"]` terms joined by `or`; a dotted field reads a nested one.
 */
function filterOf(query: string, placeholder: string, value: string): (line: Line) => boolean {
  const filter = query.split('\n').find((text) => text.startsWith('| filter '));
  if (filter === undefined) throw new Error('no filter command');
  const field = (line: Line, path: string): unknown =>
    path.split('.').reduce<unknown>((current, key) => (isObj(current) ? current[key] : undefined), line);
  const terms = filter.slice('| filter '.length).replace(placeholder, value).split(' or ').map((term) => {
    const equals = /^([\w.]+) = "([^"]*)"$/.exec(term);
    if (equals?.[1] !== undefined) {
      const [name, wanted] = [equals[1], equals[2]];
      return (line: Line) => field(line, name) === wanted;
    }
    const within = /^([\w.]+) in (\[.*\])$/.exec(term);
    if (within?.[1] !== undefined && within[2] !== undefined) {
      const [name, list] = [within[1], JSON.parse(within[2]) as unknown[]];
      return (line: Line) => list.includes(field(line, name));
    }
    throw new Error(`unsupported filter term ${term}`);
  });
  return (line) => terms.some((term) => term(line));
}

let out: string[];
let world: World;
beforeEach(async () => {
  world = await startWorld();
  out = captureOutput();
});
afterEach(async () => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  await world.close();
});

const logLines = (): Line[] =>
  out.join('').split('\n').filter((text) => text.trim() !== '').map((text) => JSON.parse(text) as Line).filter((line) => !('_aws' in line));

/** The worker routes node-a's pod CIDR in its one table, logging as it does in Lambda. */
async function routeOneNode(): Promise<{ table: string; other: string }> {
  const table = world.addClusterTable();
  const other = world.addClusterTable();
  const node = await world.addNode('node-a', { podCidrs: ['100.64.1.0/24'], networkUnavailable: 'True' });
  const { log } = powertoolsTelemetry({ cluster: 'blue', functionName: 'route-worker' });
  const deps: RouteWorkerDeps = { clusterCidrs: ['100.64.0.0/16'], routeTables: world.routeTables, routeTargets: world.routeTargets, nodes: world.nodes, cidrSets: world.cidrSets, plane: routesWorkerPlane(world.cidrSets), leaseGraceSeconds: 600, log, now: world.clock.now };
  for (const routeTableId of [table, other]) {
    const message: WorkMessage = { v: 1, kind: 'create', routeTableId, destinationCidr: '100.64.1.0/24', node: node.name, instanceId: node.instanceId };
    expect(await handleWorkMessage(JSON.stringify(message), { receiveCount: 1, maxReceiveCount: 3 }, deps)).toEqual({ outcome: 'ack', status: 'created' });
  }
  return { table, other };
}

const shape = (line: Line) => ({ message: line.message, action: line.action, routeTableId: line.routeTableId, node: line.node });

describe('saved Logs Insights queries over the lines podroute writes', () => {
  it('"why is node X not ready?" finds the node\'s route writes, its outcome per message and its NetworkUnavailable change', async () => {
    const { table, other } = await routeOneNode();
    const matches = filterOf(queryString('NodeNotReadyQuery'), 'REPLACE-WITH-NODE-NAME', 'node-a');
    expect(logLines().filter(matches).map(shape)).toEqual(expect.arrayContaining([
      { message: 'action', action: 'create-route', routeTableId: table, node: 'node-a' },
      { message: 'action', action: 'create-route', routeTableId: other, node: 'node-a' },
      { message: 'message.done', action: undefined, routeTableId: table, node: 'node-a' },
      { message: 'action', action: 'set-network-unavailable', routeTableId: undefined, node: 'node-a' },
    ]));
    expect(logLines().filter(filterOf(queryString('NodeNotReadyQuery'), 'REPLACE-WITH-NODE-NAME', 'node-b'))).toEqual([]);
  });

  it('"what did podroute do to table T?" finds the table\'s route writes and nothing of another table', async () => {
    const { table } = await routeOneNode();
    const matches = logLines().filter(filterOf(queryString('RouteTableHistoryQuery'), 'rtb-REPLACE-WITH-TABLE-ID', table));
    expect(matches.map(shape)).toEqual(expect.arrayContaining([
      { message: 'action', action: 'create-route', routeTableId: table, node: 'node-a' },
      { message: 'message.done', action: undefined, routeTableId: table, node: 'node-a' },
    ]));
    for (const line of matches) expect(line.routeTableId).toBe(table);
    // The fields the query shows are the ones the action line carries.
    const action = matches.find((line) => line.action === 'create-route');
    expect(action).toMatchObject({ cidr: '100.64.1.0/24', function: 'route-worker', level: 'INFO' });
    expect(typeof action?.ms).toBe('number');
  });
});
