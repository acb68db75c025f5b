/**
 * The caller's EC2 permissions in the emulator, and the `DryRun` parameter. EC2 API Reference,
 * "Common query parameters" (`DryRun`: "Checks whether you have the required permissions for the
 * action, without actually making the request") and "Error codes for the Amazon EC2 API":
 * `DryRunOperation` (HTTP 412, "Request would have succeeded, but DryRun flag is set") when the
 * caller may, `UnauthorizedOperation` (HTTP 403) when not, with or without DryRun. A dry run
 * changes nothing and still names real resources: the route table and interface it names must
 * exist, as the permission check reads their tags. Test infrastructure.
 */
import { Ec2ApiError } from './errors.ts';
import type { Ec2Network } from './network-state.ts';

const UNAUTHORIZED = 'You are not authorized to perform this operation.';
const DRY_RUN_OK = 'Request would have succeeded, but DryRun flag is set.';

export class Ec2Permissions {
  private readonly denied = new Set<string>();

  /** The caller may no longer call `action` (UnauthorizedOperation). */
  deny(action: string): void {
    this.denied.add(action);
  }

  clear(): void {
    this.denied.clear();
  }

  /** The answer in place of running the action, or null to run it. */
  refusal(action: string, params: ReadonlyMap<string, string>, state: Ec2Network): Ec2ApiError | null {
    if (this.denied.has(action)) return new Ec2ApiError('UnauthorizedOperation', UNAUTHORIZED, 403);
    const dryRun = params.get('DryRun');
    if (dryRun === undefined || dryRun === 'false') return null;
    if (dryRun !== 'true') throw new Ec2ApiError('InvalidParameterValue', `Value (${dryRun}) for parameter DryRun is invalid.`);
    const table = params.get('RouteTableId');
    if (table !== undefined) state.table(table);
    const eni = params.get('NetworkInterfaceId');
    if (eni !== undefined) state.networkInterface(eni);
    return new Ec2ApiError('DryRunOperation', DRY_RUN_OK, 412);
  }
}
