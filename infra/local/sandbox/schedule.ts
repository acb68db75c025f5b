/**
 * The EventBridge schedule of the reconcile function, fast-forwarded: a tick every `tickMs`, none
 * while one still runs unless `overlapTicks` (EventBridge can deliver so), and ticks on demand.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ReconcileResult } from '../../../functions/reconcile.ts';
import type { Logger } from '../../../lib/log.ts';
import { lambdaContext } from '../lambda-context.ts';
import { scheduledEvent } from './events.ts';
import type { ScheduledEvent, Context } from 'aws-lambda';

export interface Schedule {
  /** Runs the reconcile handler once now, as one schedule delivery. */
  tick(): Promise<ReconcileResult>;
  setSchedule(on: boolean): void;
  /** Reconcile runs of the schedule that threw (the schedule goes on). */
  readonly errors: unknown[];
  running(): number;
  isOn(): boolean;
  /** Stops the schedule and waits for the ticks in flight. */
  stop(): Promise<void>;
}

export function createSchedule(options: {
  tickMs: number;
  overlapTicks: boolean;
  handler: (event: ScheduledEvent, context: Context) => Promise<ReconcileResult>;
  log: Logger;
}): Schedule {
  const { tickMs } = options;
  const errors: unknown[] = [];
  let running = 0;
  let counter = 0;
  const tick = async (): Promise<ReconcileResult> => {
    running += 1;
    counter += 1;
    try {
      return await options.handler(scheduledEvent(counter), lambdaContext('podroute-reconcile', { timeoutSeconds: 60 }));
    } finally {
      running -= 1;
    }
  };
  let on = tickMs > 0;
  let timer: NodeJS.Timeout | undefined;
  const scheduled = () => {
    if (!on || (running > 0 && !options.overlapTicks)) return;
    tick().catch((error: unknown) => {
      errors.push(error);
      options.log.log('error', 'sandbox.tick-failed', { error });
    });
  };
  const setSchedule = (wanted: boolean) => {
    on = wanted && tickMs > 0;
    if (timer) clearInterval(timer);
    timer = undefined;
    if (on) timer = setInterval(scheduled, tickMs);
  };
  return {
    tick,
    setSchedule,
    errors,
    running: () => running,
    isOn: () => on,
    stop: async () => {
      setSchedule(false);
      // A tick in flight still talks to the stand-ins: let it finish before they stop.
      while (running > 0) await sleep(20);
    },
  };
}
