/**
 * The webhook's shared secret, current and previous, so a rotation never locks the API server out:
 * until every caller has the new value, the old one is still accepted.
 */
import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { GetParameterCommand, type SSMClient } from '@aws-sdk/client-ssm';
import { PodrouteError } from '../errors.ts';
import { SECRETS_MANAGER_ERROR_CODES, SSM_ERROR_CODES } from './aws-error-codes.ts';
import { awsErrorCode, classifyAwsError, isRetryableAwsError } from './aws-errors.ts';

export interface WebhookSecrets {
  current: string;
  /** The value before the last rotation, accepted as well; null when there is none. */
  previous: string | null;
}

/**
 * The versions labelled AWSCURRENT and AWSPREVIOUS; moving AWSCURRENT moves AWSPREVIOUS to the one it
 * left, and a never-rotated secret answers ResourceNotFoundException for it: no previous secret
 * (Secrets Manager API reference, GetSecretValue `VersionStage`, UpdateSecretVersionStage).
 */
export async function secretsManagerWebhookSecrets(client: SecretsManagerClient, secretId: string): Promise<WebhookSecrets> {
  const current = await readSecret(client, secretId, 'AWSCURRENT');
  if (current === null) throw new PodrouteError(`secret ${secretId} has no AWSCURRENT version`, { retryable: true });
  const previous = await readSecret(client, secretId, 'AWSPREVIOUS');
  return { current, previous: previous === current ? null : previous };
}

async function readSecret(client: SecretsManagerClient, secretId: string, stage: 'AWSCURRENT' | 'AWSPREVIOUS'): Promise<string | null> {
  try {
    const out = await client.send(new GetSecretValueCommand({ SecretId: secretId, VersionStage: stage }));
    if (out.SecretString === undefined || out.SecretString === '') {
      throw new PodrouteError(`secret ${secretId} (${stage}) has no string value`);
    }
    return out.SecretString;
  } catch (error) {
    if (stage === 'AWSPREVIOUS' && classifyAwsError(error, SECRETS_MANAGER_ERROR_CODES) === 'not-found') return null;
    if (error instanceof PodrouteError) throw error;
    throw new PodrouteError(`cannot read secret ${secretId} (${stage})`, { retryable: isRetryableAwsError(error, SECRETS_MANAGER_ERROR_CODES), cause: error });
  }
}

/**
 * The latest version, then N-1 by GetParameter's `name:version` selector (Systems Manager API
 * reference, GetParameter `Name`); a first or pruned version has none (ParameterVersionNotFound).
 * Not GetParameterHistory: that needs another IAM action and pages through up to 100 versions.
 */
export async function ssmWebhookSecrets(client: SSMClient, name: string): Promise<WebhookSecrets> {
  let latest;
  try {
    latest = (await client.send(new GetParameterCommand({ Name: name, WithDecryption: true }))).Parameter;
  } catch (error) {
    throw new PodrouteError(`cannot read SSM parameter ${name}`, { retryable: isRetryableAwsError(error, SSM_ERROR_CODES), cause: error });
  }
  const current = latest?.Value;
  if (!current) throw new PodrouteError(`SSM parameter ${name} has no value`);
  const version = latest?.Version ?? 0;
  if (version <= 1) return { current, previous: null };
  try {
    const out = await client.send(new GetParameterCommand({ Name: `${name}:${version - 1}`, WithDecryption: true }));
    const previous = out.Parameter?.Value;
    return { current, previous: previous && previous !== current ? previous : null };
  } catch (error) {
    // Only the version asked for is missing (pruned): there is no previous secret.
    if (awsErrorCode(error) === 'ParameterVersionNotFound') return { current, previous: null };
    throw new PodrouteError(`cannot read SSM parameter ${name}:${version - 1}`, { retryable: isRetryableAwsError(error, SSM_ERROR_CODES), cause: error });
  }
}

