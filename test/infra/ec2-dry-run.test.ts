/**
 * The EC2 emulator answers DryRun as EC2 does (infra/local/ec2/permissions.ts): DryRunOperation
 * (412) for an allowed call, which changes nothing; UnauthorizedOperation (403) for a refused one,
 * with or without DryRun; a dry run still names real resources.
 */
import { CreateRouteCommand, EC2Client, EC2ServiceException } from '@aws-sdk/client-ec2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEc2Emulator, type Ec2Emulator } from '../../infra/local/ec2/index.ts';

let ec2: Ec2Emulator;
let client: EC2Client;
beforeAll(async () => {
  ec2 = await startEc2Emulator({ throttle: false });
  client = new EC2Client({ endpoint: ec2.url, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 });
});
afterAll(() => ec2.close());

async function answer(command: CreateRouteCommand): Promise<{ code: string; status: number | undefined }> {
  try {
    await client.send(command);
    return { code: 'ok', status: 200 };
  } catch (error) {
    if (!(error instanceof EC2ServiceException)) throw error;
    return { code: error.name, status: error.$metadata.httpStatusCode };
  }
}

describe('EC2 emulator DryRun', () => {
  it('answers DryRunOperation and writes nothing, UnauthorizedOperation once denied, NotFound for a table that does not exist', async () => {
    const table = ec2.state.addRouteTable({}).id;
    const eni = ec2.state.addInstance({}).networkInterfaceIds[0] ?? '';
    const route = (dryRun: boolean, routeTableId = table) => new CreateRouteCommand({ DryRun: dryRun, RouteTableId: routeTableId, DestinationCidrBlock: '10.244.0.0/24', NetworkInterfaceId: eni });
    const before = ec2.state.routes(table);
    expect(await answer(route(true))).toEqual({ code: 'DryRunOperation', status: 412 });
    expect(ec2.state.routes(table)).toEqual(before);
    expect(await answer(route(true, 'rtb-0000000000000dead'))).toEqual({ code: 'InvalidRouteTableID.NotFound', status: 400 });
    ec2.permissions.deny('CreateRoute');
    expect(await answer(route(true))).toEqual({ code: 'UnauthorizedOperation', status: 403 });
    expect(await answer(route(false))).toEqual({ code: 'UnauthorizedOperation', status: 403 });
    expect(ec2.state.routes(table)).toEqual(before);
    ec2.permissions.clear();
    expect(await answer(route(false))).toEqual({ code: 'ok', status: 200 });
    expect(ec2.state.routes(table).length).toBe(before.length + 1);
  });
});
