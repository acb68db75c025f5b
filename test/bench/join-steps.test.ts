/**
 * The join-to-ready bench's step split (bench/join-to-ready.ts `stepsOf`, `summarizeSteps`) and
 * the cold-start bench's origin of a bundle input (bench/cold-start.ts `originOf`): pure functions
 * over stamped log lines and metafile paths.
 */
import { describe, expect, it } from 'vitest';
import { originOf } from '../../bench/cold-start.ts';
import { stepsOf, summarizeSteps } from '../../bench/join-to-ready.ts';
import type { Stamped } from '../../bench/join-to-ready.ts';

const node = 'ip-10-4-0-1.ec2.internal';
const line = (at: number, event: string, fields: Record<string, unknown>): Stamped => ({ at, event, fields: { node, ...fields } });

describe('stepsOf', () => {
  const lines: Stamped[] = [
    line(40, 'webhook.admitted', { operation: 'CREATE' }),
    line(100, 'action', { action: 'create-route', ms: 30 }),
    line(150, 'action', { action: 'set-network-unavailable', value: false, ms: 20 }),
    line(151, 'message.done', { kind: 'sync-node', ms: 90 }),
  ];

  it('cuts a join at the admission, the message start and the condition write', () => {
    // message started at 151 - 90 = 61; the write at 150 - 20 = 130; seen ready at 145.
    expect(stepsOf(lines, node, 10, 145)).toEqual({ claim: 30, queue: 21, worker: 69, patch: 15 });
  });

  it('adds up to the join time', () => {
    const steps = stepsOf(lines, node, 10, 170);
    expect(steps.claim + steps.queue + steps.worker + steps.patch).toBe(160);
  });

  it('ignores other nodes and lines from before the join', () => {
    const noise = [line(5, 'webhook.admitted', {}), { at: 45, event: 'webhook.admitted', fields: { node: 'other' } }, ...lines];
    expect(stepsOf(noise, node, 10, 145)).toEqual({ claim: 30, queue: 21, worker: 69, patch: 15 });
  });

  it.each([
    ['no admission', lines.slice(1)],
    ['no condition write', lines.filter((l) => l.fields.action !== 'set-network-unavailable')],
    ['no finished message', lines.slice(0, 3)],
  ])('refuses a join with %s', (_, partial) => {
    expect(() => stepsOf(partial, node, 10, 145)).toThrow(/webhook.admitted/);
  });
});

describe('summarizeSteps', () => {
  it('gives each step its median and its share of the medians summed', () => {
    const summary = summarizeSteps([
      { claim: 100, queue: 0, worker: 50, patch: 50 },
      { claim: 300, queue: 0, worker: 60, patch: 50 },
      // One join whose message came back late: it moves no median.
      { claim: 200, queue: 9000, worker: 40, patch: 50 },
    ]);
    expect(summary.medianMs).toEqual({ claim: 200, queue: 0, worker: 50, patch: 50 });
    expect(summary.share).toEqual({ claim: 0.667, queue: 0, worker: 0.167, patch: 0.167 });
  });
});

describe('originOf', () => {
  it.each([
    ['node_modules/@aws-sdk/client-ec2/dist-es/schemas/schemas_0.js', '@aws-sdk/client-ec2'],
    ['node_modules/zod/v4/core/schemas.js', 'zod'],
    ['../../node_modules/ipaddr.js/lib/ipaddr.js', 'ipaddr.js'],
    ['lib/usecases/reconcile.ts', 'lib/usecases'],
    ['lib/config.ts', 'lib'],
    ['functions/wiring.ts', 'functions'],
  ])('%s comes from %s', (input, origin) => {
    expect(originOf(input)).toBe(origin);
  });
});
