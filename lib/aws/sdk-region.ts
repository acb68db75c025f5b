/**
 * The region the AWS SDK's own clients would use when given none, read with the SDK's own chain
 * (`@smithy/core/config`'s NODE_REGION_CONFIG_OPTIONS, as every client's runtime config loads it):
 * AWS_REGION, then `region` in the profile (AWS_PROFILE, else `default`) of the shared credentials
 * and config files (AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE; ~/.aws/), then, on EC2, the
 * instance metadata's placement/region (off with AWS_EC2_METADATA_DISABLED). The SDK does not read
 * AWS_DEFAULT_REGION (the AWS CLI's).
 */
import { NODE_REGION_CONFIG_FILE_OPTIONS, NODE_REGION_CONFIG_OPTIONS, loadConfig } from '@smithy/core/config';

/** That region, or undefined where the SDK would fail with "Region is missing". */
export async function sdkDefaultRegion(): Promise<string | undefined> {
  const fallback = NODE_REGION_CONFIG_OPTIONS.default;
  const lastResort = async (): Promise<string | undefined> => {
    try {
      return typeof fallback === 'function' ? await fallback() : fallback;
    } catch {
      return undefined;
    }
  };
  const region = await loadConfig<string | undefined>({ ...NODE_REGION_CONFIG_OPTIONS, default: lastResort }, NODE_REGION_CONFIG_FILE_OPTIONS)();
  return region === '' ? undefined : region;
}
