/**
 * The route quota from Service Quotas: ServiceCode `vpc`, QuotaCode `L-93826ACB`, "Routes per
 * route table" (the code lib/routes/route-table-headroom.ts names; Amazon VPC User Guide, "Amazon
 * VPC quotas"), read with GetServiceQuota (the applied value) and GetAWSDefaultServiceQuota (the
 * default; Service Quotas API Reference). Each answers `Quota.Value`; a missing value is an error.
 */
import { GetAWSDefaultServiceQuotaCommand, GetServiceQuotaCommand, type ServiceQuotasClient } from '@aws-sdk/client-service-quotas';
import { InvalidInputError } from '../errors.ts';
import type { RouteQuotaSource } from '../usecases/ports.ts';

export const ROUTE_QUOTA_CODE = { ServiceCode: 'vpc', QuotaCode: 'L-93826ACB' } as const;

export class ServiceQuotasRouteQuota implements RouteQuotaSource {
  constructor(private readonly client: ServiceQuotasClient) {}

  async applied(): Promise<number> {
    return valueOf((await this.client.send(new GetServiceQuotaCommand({ ...ROUTE_QUOTA_CODE }))).Quota?.Value, 'GetServiceQuota');
  }

  async awsDefault(): Promise<number> {
    return valueOf((await this.client.send(new GetAWSDefaultServiceQuotaCommand({ ...ROUTE_QUOTA_CODE }))).Quota?.Value, 'GetAWSDefaultServiceQuota');
  }
}

function valueOf(value: number | undefined, action: string): number {
  if (value === undefined) throw new InvalidInputError(`${action} answered no Quota.Value for vpc/L-93826ACB`);
  return value;
}
