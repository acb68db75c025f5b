/**
 * Whether the credentials in use may make podroute's EC2 writes, asked with `DryRun: true` (EC2 API
 * Reference, "Common query parameters"): EC2 checks the permission on the real resource, its tags
 * included, and answers `DryRunOperation` when the call would have been allowed or
 * `UnauthorizedOperation` when not ("Error codes for the Amazon EC2 API"); nothing changes. It
 * checks the caller, not another principal: run it with the function role's credentials to check
 * the role itself.
 */
import { CreateRouteCommand, type EC2Client, ModifyNetworkInterfaceAttributeCommand } from '@aws-sdk/client-ec2';
import { errorText } from '../errors.ts';
import { awsErrorCode } from './aws-errors.ts';

export type DryRunAnswer = { allowed: true } | { allowed: false; reason: string };

export class Ec2DryRun {
  constructor(private readonly client: EC2Client) {}

  mayCreateRoute(routeTableId: string, destinationCidr: string, networkInterfaceId: string): Promise<DryRunAnswer> {
    const destination = destinationCidr.includes(':') ? { DestinationIpv6CidrBlock: destinationCidr } : { DestinationCidrBlock: destinationCidr };
    return this.ask(() => this.client.send(new CreateRouteCommand({ DryRun: true, RouteTableId: routeTableId, NetworkInterfaceId: networkInterfaceId, ...destination })));
  }

  mayTurnOffSourceDestCheck(networkInterfaceId: string): Promise<DryRunAnswer> {
    return this.ask(() => this.client.send(new ModifyNetworkInterfaceAttributeCommand({ DryRun: true, NetworkInterfaceId: networkInterfaceId, SourceDestCheck: { Value: false } })));
  }

  private async ask(call: () => Promise<unknown>): Promise<DryRunAnswer> {
    try {
      await call();
    } catch (error) {
      const code = awsErrorCode(error);
      if (code === 'DryRunOperation') return { allowed: true };
      if (code === 'UnauthorizedOperation') return { allowed: false, reason: errorText(error) };
      throw error;
    }
    throw new Error('EC2 answered a DryRun request with success: it did not honour DryRun');
  }
}
