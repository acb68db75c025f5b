/**
 * Message delays on the sandbox's clock: a SendMessage(Batch) `DelaySeconds` the functions ask for
 * (the webhook's node-left check waits 10 s) is divided by the time scale, as the schedule, the
 * visibility timeout and the retry backoffs are. Rounded up, so a delayed message stays delayed.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';

type DelayedInput = { DelaySeconds?: number; Entries?: Array<{ DelaySeconds?: number }> };

export function scaleDelays(client: SQSClient, timeScale: number): SQSClient {
  if (!(timeScale > 1)) return client;
  const scale = (seconds: number | undefined) => (seconds === undefined ? undefined : Math.ceil(seconds / timeScale));
  client.middlewareStack.add(
    (next) => async (args) => {
      const input = args.input as DelayedInput;
      const scaled = {
        ...args.input,
        ...(input.DelaySeconds === undefined ? {} : { DelaySeconds: scale(input.DelaySeconds) }),
        ...(input.Entries ? { Entries: input.Entries.map((entry) => (entry.DelaySeconds === undefined ? entry : { ...entry, DelaySeconds: scale(entry.DelaySeconds) })) } : {}),
      };
      return next({ ...args, input: scaled });
    },
    { step: 'initialize', name: 'sandboxScaledDelays' },
  );
  return client;
}
