/** Reading one instance and its primary network interface (device index 0), shared by the EC2 adapters. */
import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import type { EC2Client, Instance, InstanceNetworkInterface } from '@aws-sdk/client-ec2';
import { Ec2NotFoundError, toPodrouteError } from './ec2-errors.ts';

async function describeInstance(client: EC2Client, instanceId: string, operation: string): Promise<Instance> {
  let instance: Instance | undefined;
  try {
    const out = await client.send(new DescribeInstancesCommand({ InstanceIds: [instanceId] }));
    instance = (out.Reservations ?? []).flatMap((r) => r.Instances ?? []).find((i) => i.InstanceId === instanceId);
  } catch (error) {
    throw toPodrouteError(error, { operation, subject: instanceId });
  }
  if (!instance) {
    throw new Ec2NotFoundError(`EC2 ${operation} ${instanceId}: instance not found`, {
      kind: 'not-found',
      operation,
      code: undefined,
      retryable: false,
      cause: undefined,
    });
  }
  return instance;
}

/** The primary interface: attachment device index 0 on network card 0. */
export function primaryInterfaceOf(instance: Instance): InstanceNetworkInterface | undefined {
  return (instance.NetworkInterfaces ?? []).find(
    (eni) => eni.Attachment?.DeviceIndex === 0 && (eni.Attachment.NetworkCardIndex ?? 0) === 0 && eni.NetworkInterfaceId !== undefined,
  );
}

export async function primaryInterface(
  client: EC2Client,
  instanceId: string,
  operation: string,
): Promise<{ instance: Instance; eni: InstanceNetworkInterface & { NetworkInterfaceId: string } }> {
  const instance = await describeInstance(client, instanceId, operation);
  const eni = primaryInterfaceOf(instance);
  const eniId = eni?.NetworkInterfaceId;
  if (!eni || eniId === undefined) {
    throw new Ec2NotFoundError(`EC2 ${operation} ${instanceId}: instance has no primary network interface (state ${instance.State?.Name ?? 'unknown'})`, {
      kind: 'not-found',
      operation,
      code: undefined,
      retryable: false,
      cause: undefined,
    });
  }
  return { instance, eni: { ...eni, NetworkInterfaceId: eniId } };
}
