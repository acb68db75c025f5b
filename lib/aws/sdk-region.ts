/**
 * The region the AWS SDK's clients would use when given none, read with the SDK's own chain
 * (`@smithy/core/config` NODE_REGION_CONFIG_OPTIONS): AWS_REGION, then the profile's `region` in the
 * shared config files, then the EC2 instance metadata. The SDK does not read AWS_DEFAULT_REGION.
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
