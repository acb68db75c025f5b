/**
 * A Lambda `Context` for handlers invoked locally (the sandbox's schedule and HTTP API). Only the
 * promise style is supported: the callback methods throw, as podroute's handlers never use them.
 */
import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';

export function lambdaContext(functionName: string, options: { timeoutSeconds?: number; region?: string } = {}): Context {
  const deadline = Date.now() + (options.timeoutSeconds ?? 30) * 1000;
  const region = options.region ?? 'us-east-1';
  const unsupported = (): never => {
    throw new Error('callback-style context methods are not supported; return a promise');
  };
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${region}:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: unsupported,
    fail: unsupported,
    succeed: unsupported,
  };
}
