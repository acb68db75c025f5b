/** Ec2InstanceStates over HTTP against the EC2 emulator: the state EC2 answers, null for an instance it does not know. */
import { EC2Client } from '@aws-sdk/client-ec2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEc2Emulator } from '../../infra/local/ec2/index.ts';
import type { Ec2Emulator } from '../../infra/local/ec2/index.ts';
import { Ec2InstanceStates } from '../../lib/aws/ec2-instance-states.ts';
import { PodrouteError } from '../../lib/errors.ts';

describe('Ec2InstanceStates against the emulator', () => {
  let ec2: Ec2Emulator;
  let states: Ec2InstanceStates;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    let now = 1_000_000;
    ec2 = await startEc2Emulator({ throttle: false, notFoundAfterLaunchMs: 5_000, now: () => now });
    states = new Ec2InstanceStates(new EC2Client({ endpoint: ec2.url, region: 'us-east-1', credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' }, maxAttempts: 1 }));
    ids.running = ec2.state.addInstance().id;
    ids.terminated = ec2.state.addInstance().id;
    now += 10_000;
    ids.fresh = ec2.state.addInstance().id;
    ec2.state.terminateInstance(ids.terminated);
  });
  afterAll(() => ec2?.close());

  it.each([
    ['a running instance', 'running', 'running'],
    ['a terminated one (still listed, as EC2 lists it for a while)', 'terminated', 'terminated'],
    ['one inside its launch window (not visible yet)', 'fresh', null],
  ])('%s: %s', async (_name, key, want) => {
    expect(await states.instanceState(ids[key] ?? '')).toBe(want);
  });

  it('answers null for an id EC2 does not know (InvalidInstanceID.NotFound)', async () => {
    expect(await states.instanceState('i-0fffffffffffffff0')).toBeNull();
  });

  it('rejects with a typed error for anything else (a malformed id)', async () => {
    await expect(states.instanceState('i-123')).rejects.toBeInstanceOf(PodrouteError);
  });
});
