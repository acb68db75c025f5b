/**
 * The doctor's wiring (its composition root, as functions/wiring.ts is the functions'): the data
 * plane's checks and writes, built for the configured MODE from the doctor's SDK clients, chosen
 * here once; the checks are the plane's own (doctor-checks.ts of lib/dataplane/routes and lib/dataplane/prefixes).
 */
import { tryParseCidr } from '../cidr/cidr.ts';
import type { Config } from '../config.ts';
import { DynamoDbCidrStore, cidrSetId } from '../aws/dynamodb-cidr-store.ts';
import { Ec2DryRun } from '../aws/ec2-dry-run.ts';
import { Ec2EniPrefixes } from '../aws/ec2-prefixes.ts';
import { Ec2PrimaryInterfaces } from '../aws/ec2-primary-interfaces.ts';
import { Ec2RouteTables } from '../aws/ec2-route-tables.ts';
import { Ec2Subnets } from '../aws/ec2-subnets.ts';
import { ServiceQuotasRouteQuota } from '../aws/service-quotas.ts';
import { WRITE_PERMISSIONS as PREFIXES_WRITES, doctorChecks as prefixesDoctorChecks } from '../dataplane/prefixes/doctor-checks.ts';
import { WRITE_PERMISSIONS as ROUTES_WRITES, doctorChecks as routesDoctorChecks } from '../dataplane/routes/doctor-checks.ts';
import { createCidrSet } from '../ipam/index.ts';
import type { PlaneDoctorChecks, RoleWrites } from '../usecases/doctor-check.ts';

type EC2Client = ConstructorParameters<typeof Ec2RouteTables>[0];
type DynamoDBClient = ConstructorParameters<typeof DynamoDbCidrStore>[0]['client'];
type ServiceQuotasClient = ConstructorParameters<typeof ServiceQuotasRouteQuota>[0];

export interface DoctorPlaneInput {
  config: Config;
  ec2: EC2Client;
  dynamodb: DynamoDBClient;
  serviceQuotas: ServiceQuotasClient;
  /** Ask EC2 with DryRun whether the caller may make the plane's writes (--dry-run-writes). */
  dryRunWrites: boolean;
}

const PLANE_CHECKS: Record<Config['mode'], (input: DoctorPlaneInput) => PlaneDoctorChecks> = {
  routes: ({ config, ec2, serviceQuotas, dryRunWrites }) =>
    routesDoctorChecks({
      config,
      quotas: new ServiceQuotasRouteQuota(serviceQuotas),
      fallbackQuota: config.routeQuota,
      routeTables: new Ec2RouteTables(ec2, { clusterName: config.clusterName, routeTableIds: config.routeTableIds }),
      interfaces: new Ec2PrimaryInterfaces(ec2),
      dryRun: dryRunWrites ? new Ec2DryRun(ec2) : null,
    }),
  prefixes: ({ config, ec2, dynamodb }) =>
    prefixesDoctorChecks({
      config,
      prefixes: new Ec2EniPrefixes(ec2),
      subnets: new Ec2Subnets(ec2),
      rangeUsage: config.cidrTableName ? (range) => rangeUsage(config, dynamodb, range) : null,
    }),
};

/** The EC2 writes the mode's function roles make, for the doctor's IAM simulation. */
export function planeWrites(config: Pick<Config, 'mode'>): readonly RoleWrites[] {
  return config.mode === 'prefixes' ? PREFIXES_WRITES : ROUTES_WRITES;
}

export function doctorPlaneChecks(input: DoctorPlaneInput): PlaneDoctorChecks {
  return PLANE_CHECKS[input.config.mode](input);
}

/** A pod range's blocks used and in all, by a count query of its partition of the CIDR table: nothing is registered or written. */
async function rangeUsage(config: Config, client: DynamoDBClient, range: string): Promise<{ used: number; total: number }> {
  const nodeMaskSize = config.nodeMaskSize[tryParseCidr(range)?.family ?? 4];
  const store = new DynamoDbCidrStore({ client, tableName: config.cidrTableName, setId: cidrSetId(range, nodeMaskSize) });
  const set = await createCidrSet({ clusterCidr: range, nodeMaskSize, store, rangeKind: 'pod range' });
  return set.usage();
}
