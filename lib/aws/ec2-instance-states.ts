/** An instance's state as EC2 answers it now (DescribeInstances by id), for the cloud-events use case. */
import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import type { EC2Client } from '@aws-sdk/client-ec2';
import type { InstanceState } from '../events/cloud-event.ts';
import { Ec2NotFoundError, toPodrouteError } from './ec2-errors.ts';
import type { InstanceStates } from '../usecases/ports.ts';

const STATES: readonly string[] = ['pending', 'running', 'stopping', 'stopped', 'shutting-down', 'terminated'];

export class Ec2InstanceStates implements InstanceStates {
  constructor(private readonly client: EC2Client) {}

  /**
   * The instance's `State.Name`, or null when EC2 does not know it (InvalidInstanceID.NotFound: an
   * unknown id, one terminated long ago, or one too new to be visible yet, EC2 Developer Guide,
   * "Eventual consistency in the Amazon EC2 API"). Other failures reject, typed.
   */
  async instanceState(instanceId: string): Promise<InstanceState | null> {
    try {
      const out = await this.client.send(new DescribeInstancesCommand({ InstanceIds: [instanceId] }));
      const instance = (out.Reservations ?? []).flatMap((r) => r.Instances ?? []).find((i) => i.InstanceId === instanceId);
      const name = instance?.State?.Name;
      return name !== undefined && STATES.includes(name) ? (name as InstanceState) : null;
    } catch (error) {
      const mapped = toPodrouteError(error, { operation: 'DescribeInstances', subject: instanceId });
      if (mapped instanceof Ec2NotFoundError) return null;
      throw mapped;
    }
  }
}
