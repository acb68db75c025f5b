/**
 * The AWS region of the CLI's clients, in the AWS CLI's order: --region, AWS_REGION,
 * AWS_DEFAULT_REGION (which the AWS CLI reads and the JavaScript SDK does not), then what the SDK
 * finds itself (the profile's region, the instance metadata: lib/aws/sdk-region.ts). With none,
 * a usage error that says how to set one; there is no built-in default.
 */
import { UsageError } from './main.ts';

export const REGION_HELP = '$AWS_REGION, else $AWS_DEFAULT_REGION, else the profile\'s region';

export const NO_REGION =
  'no AWS region: pass --region, set AWS_REGION (or AWS_DEFAULT_REGION), or set region in your profile (aws configure set region <region>)';

export async function cliRegion(
  flag: string | undefined,
  env: Record<string, string | undefined>,
  sdkRegion: () => Promise<string | undefined>,
): Promise<string> {
  const given = [flag, env.AWS_REGION, env.AWS_DEFAULT_REGION].find((value) => value !== undefined && value !== '');
  const region = given ?? (await sdkRegion());
  if (region === undefined || region === '') throw new UsageError(NO_REGION);
  return region;
}
