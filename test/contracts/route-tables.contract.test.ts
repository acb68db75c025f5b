/** The RouteTables contract against the fake and against Ec2RouteTables over the EC2 emulator. */
import { useEc2Emulators } from '../support/ec2-emulators.ts';
import { Ec2RouteTables } from '../../lib/aws/ec2-route-tables.ts';
import { MemoryRouteTables } from '../fakes/memory-route-tables.ts';
import { CONTRACT_CLUSTER, routeTablesContract } from './route-tables.contract.ts';
import { Ec2RouteTargets } from '../../lib/aws/ec2-route-targets.ts';

routeTablesContract('MemoryRouteTables', async ({ routeLimit }) => {
  const port = new MemoryRouteTables({ clusterName: CONTRACT_CLUSTER });
  if (routeLimit !== undefined) port.routeLimit = routeLimit;
  return {
    port,
    targets: port,
    addTable: (tags) => port.addTable(tags === undefined ? {} : { tags }),
    addInstance: (input) => port.addInstance(input),
    terminateInstance: (id) => port.terminateInstance(id),
    addPropagatedRoute: (table, cidr) => port.addPropagatedRoute(table, cidr),
  };
});

const startEc2 = useEc2Emulators();

routeTablesContract('Ec2RouteTables over the EC2 emulator', async ({ routeLimit }) => {
  const { ec2, client } = await startEc2(routeLimit === undefined ? {} : { routeLimit });
  return {
    port: new Ec2RouteTables(client, { clusterName: CONTRACT_CLUSTER }),
    targets: new Ec2RouteTargets(client),
    addTable: (tags) => ec2.state.addRouteTable({ tags: tags ?? { [`kubernetes.io/cluster/${CONTRACT_CLUSTER}`]: 'owned' } }).id,
    addInstance: (input = {}) => {
      const instance = ec2.state.addInstance({ ...(input.sourceDestCheck === undefined ? {} : { sourceDestCheck: input.sourceDestCheck }), secondaryEnis: input.secondaryEnis ?? 0 });
      return { instanceId: instance.id, eniId: instance.networkInterfaceIds[0] ?? '', eniIds: [...instance.networkInterfaceIds] };
    },
    terminateInstance: (id) => ec2.state.terminateInstance(id),
    addPropagatedRoute: (table, cidr) => void ec2.state.addPropagatedRoute({ routeTableId: table, destinationCidr: cidr }),
  };
});
