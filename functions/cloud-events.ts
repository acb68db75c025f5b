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
import { telemetryFromEnv, telemetryMiddlewares, wiringOptions } from './telemetry.ts';
import { once, wiringFromEnv } from './wiring.ts';
import type { Wiring } from './wiring.ts';

/** OWN_PRINCIPAL_ARNS: podroute's role ARNs, comma-separated (the stack sets them). */
export function ownPrincipalsFrom(env: Record<string, string | undefined>): string[] {
  return (env.OWN_PRINCIPAL_ARNS ?? '').split(',').map((arn) => arn.trim()).filter((arn) => arn !== '');
}

/** The use case's deps, or null when the wiring's data plane has no event-driven repair (prefixes mode). */
export function cloudEventDeps(wiring: Wiring, ownPrincipals: readonly string[]): CloudEventDeps | null {
  if (!wiring.instances) return null;
  const { config } = wiring;
  return {
    config: {
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
    .handler(async (event) => {
      const wiring = await getWiring();
      if (wiring.observe === true) {
        // Observe mode queues nothing; the next reconcile's drift shows what the event would repair.
        wiring.log.log('info', 'cloud-event.done', { status: 'ignored:observe' });
        return { status: 'ignored:observe', messages: 0 };
      }
      const deps = cloudEventDeps(wiring, ownPrincipals);
      if (deps === null) {
        // Prefixes mode: a terminated node's prefixes go with its interface, its lease with its Node.
        wiring.log.log('info', 'cloud-event.done', { status: 'ignored:no-event-repair' });
        return { status: 'ignored:no-event-repair', messages: 0 };
      }
      return handleCloudEvent(event, deps);
    });
}

const telemetry = telemetryFromEnv('cloud-events', process.env);
export const handler = createCloudEventsHandler(once(() => wiringFromEnv(process.env, wiringOptions(telemetry))), ownPrincipalsFrom(process.env), telemetry);
