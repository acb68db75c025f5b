/**
 * cloud-events: the Lambda behind two EventBridge rules (serverless.yml): EC2 instance state
 * changes and route writes that CloudTrail delivers. Validates the event and hands it to
 * lib/usecases/cloud-events.ts, which confirms it with EC2 and the lease table before it queues
 * anything for the route worker. A failed read or send throws: Lambda retries the asynchronous
 * invocation (the function's maximumRetryAttempts), and the next reconcile repairs what is left.
 */
import middy from '@middy/core';
import type { EventBridgeEvent } from 'aws-lambda';
import type { Telemetry } from '../lib/log.ts';
import { type CloudEventDeps, type CloudEventResult, handleCloudEvent } from '../lib/usecases/cloud-events.ts';
import { telemetryFromEnv, telemetryMiddlewares } from './telemetry.ts';
import { once, wiringFromEnv } from './wiring.ts';
import type { Wiring } from './wiring.ts';

/** OWN_PRINCIPAL_ARNS: podroute's role ARNs, comma-separated (the stack sets them). */
export function ownPrincipalsFrom(env: Record<string, string | undefined>): string[] {
  return (env.OWN_PRINCIPAL_ARNS ?? '').split(',').map((arn) => arn.trim()).filter((arn) => arn !== '');
}

export function cloudEventDeps(wiring: Wiring, ownPrincipals: readonly string[]): CloudEventDeps {
  if (!wiring.instances) throw new Error('the wiring has no instance-state port');
  const { config } = wiring;
  return {
    config: {
      mode: config.mode,
      clusterCidrs: config.clusterCidrs,
      ownPrincipals,
      ...(config.nodeSelector ? { nodeSelector: config.nodeSelector } : {}),
      ...(config.migrationMaskSizes ? { migrationMaskSizes: config.migrationMaskSizes } : {}),
    },
    routeTables: wiring.routeTables,
    nodes: wiring.nodes,
    queue: wiring.queue,
    cidrSets: wiring.cidrSets,
    instances: wiring.instances,
    log: wiring.log,
    now: wiring.now,
  };
}

export function createCloudEventsHandler(getWiring: () => Promise<Wiring>, ownPrincipals: readonly string[], telemetry?: Telemetry) {
  return middy<EventBridgeEvent<string, unknown>, CloudEventResult>()
    .use(telemetryMiddlewares(telemetry))
    .handler(async (event) => handleCloudEvent(event, cloudEventDeps(await getWiring(), ownPrincipals)));
}

const telemetry = telemetryFromEnv('cloud-events', process.env);
export const handler = createCloudEventsHandler(once(() => wiringFromEnv(process.env, { log: telemetry.log })), ownPrincipalsFrom(process.env), telemetry);
