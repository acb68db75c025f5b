/**
 * The CLI's AWS region: --region, AWS_REGION, AWS_DEFAULT_REGION, then the SDK's own chain (the
 * profile's region in the shared config file), else a usage error; never a built-in default.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { sdkDefaultRegion } from '../../lib/aws/sdk-region.ts';
import { UsageError } from '../../lib/cli/main.ts';
import { NO_REGION, cliRegion } from '../../lib/cli/region.ts';

const fixtures = join(import.meta.dirname, '..', 'fixtures', 'aws-config');

describe('cliRegion', () => {
  const sdk = (region: string | undefined) => async () => region;
  it.each<[string, string | undefined, Record<string, string>, string | undefined, string]>([
    ['the flag first', 'eu-north-1', { AWS_REGION: 'us-west-2', AWS_DEFAULT_REGION: 'us-west-1' }, 'eu-west-1', 'eu-north-1'],
    ['then AWS_REGION', undefined, { AWS_REGION: 'us-west-2', AWS_DEFAULT_REGION: 'us-west-1' }, 'eu-west-1', 'us-west-2'],
    ['then AWS_DEFAULT_REGION, as the AWS CLI reads it, before the profile', undefined, { AWS_DEFAULT_REGION: 'us-west-1' }, 'eu-west-1', 'us-west-1'],
    ['an empty variable counts as unset', undefined, { AWS_REGION: '', AWS_DEFAULT_REGION: '' }, 'eu-west-1', 'eu-west-1'],
    ['then what the SDK finds (the profile)', undefined, {}, 'eu-west-1', 'eu-west-1'],
  ])('%s', async (_name, flag, env, found, region) => {
    expect(await cliRegion(flag, env, sdk(found))).toBe(region);
  });

  it('with no region anywhere, a usage error that says how to set one', async () => {
    const error = await cliRegion(undefined, {}, sdk(undefined)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toBe(NO_REGION);
    expect(NO_REGION).toMatch(/--region.*AWS_REGION.*AWS_DEFAULT_REGION.*aws configure set region/);
  });
});

describe('sdkDefaultRegion: the SDK\'s own chain', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });
  /** Only the variables under test: no instance metadata, the fixture files, no region set. */
  const environment = (profile: string | undefined, config = join(fixtures, 'config')) => {
    vi.stubEnv('AWS_EC2_METADATA_DISABLED', 'true');
    vi.stubEnv('AWS_CONFIG_FILE', config);
    vi.stubEnv('AWS_SHARED_CREDENTIALS_FILE', join(fixtures, 'credentials'));
    vi.stubEnv('AWS_REGION', undefined);
    vi.stubEnv('AWS_DEFAULT_REGION', 'ignored-1');
    vi.stubEnv('AWS_PROFILE', profile);
  };

  it.each<[string, string | undefined, string | undefined]>([
    ['the default profile\'s region', undefined, 'eu-west-1'],
    ['AWS_PROFILE\'s region', 'ops', 'ap-southeast-2'],
    ['a profile without one: none (AWS_DEFAULT_REGION is not the SDK\'s)', 'bare', undefined],
    ['a profile that is not there: none', 'missing', undefined],
  ])('%s', async (_name, profile, region) => {
    environment(profile);
    expect(await sdkDefaultRegion()).toBe(region);
  });

  it('AWS_REGION before the profile', async () => {
    environment('ops');
    vi.stubEnv('AWS_REGION', 'sa-east-1');
    expect(await sdkDefaultRegion()).toBe('sa-east-1');
  });

  it('no config file: none', async () => {
    environment(undefined, join(fixtures, 'no-such-file'));
    expect(await sdkDefaultRegion()).toBeUndefined();
  });
});
