/**
 * The node side of a route (the RouteTargets port, lib/usecases/ports.ts): the instance's primary
 * interface (device index 0), whose source/destination check is turned off on that interface alone,
 * since EC2 refuses the instance-level call on an instance with several interfaces
 * (`InvalidInstanceID`; EC2 API reference, ModifyInstanceAttribute / ModifyNetworkInterfaceAttribute).
 */
import { DescribeNetworkInterfacesCommand, ModifyNetworkInterfaceAttributeCommand } from '@aws-sdk/client-ec2';
import type { EC2Client } from '@aws-sdk/client-ec2';
import type { RouteTargets } from '../usecases/ports.ts';
import { ResourceNotFoundError } from '../usecases/port-errors.ts';
import { toPodrouteError } from './ec2-errors.ts';
import { primaryInterface } from './ec2-instances.ts';

interface NodeTarget {
  instanceId: string;
  primaryEniId: string;
  /** The primary interface's own source/destination check. */
  sourceDestCheck: boolean;
}

export class Ec2RouteTargets implements RouteTargets {
  constructor(private readonly client: EC2Client) {}

  /**
   * The instance's primary interface (the route target) and that interface's own check, as
   * DescribeInstances reports it per interface (`NetworkInterfaces[].SourceDestCheck`).
   */
  async nodeTarget(instanceId: string): Promise<NodeTarget> {
    const { eni } = await primaryInterface(this.client, instanceId, 'DescribeInstances');
    return { instanceId, primaryEniId: eni.NetworkInterfaceId, sourceDestCheck: eni.SourceDestCheck ?? true };
  }

  /**
   * The instance whose primary interface `networkInterfaceId` is (attached at device index 0), or
   * null: attached elsewhere, not attached, or unknown. EC2 API Reference,
   * DescribeNetworkInterfaces and NetworkInterfaceAttachment (InstanceId, DeviceIndex).
   */
  async interfaceInstance(networkInterfaceId: string): Promise<string | null> {
    try {
      const out = await this.client.send(new DescribeNetworkInterfacesCommand({ NetworkInterfaceIds: [networkInterfaceId] }));
      const attachment = out.NetworkInterfaces?.find((eni) => eni.NetworkInterfaceId === networkInterfaceId)?.Attachment;
      return attachment?.DeviceIndex === 0 && typeof attachment.InstanceId === 'string' ? attachment.InstanceId : null;
    } catch (error) {
      const mapped = toPodrouteError(error, { operation: 'DescribeNetworkInterfaces', subject: networkInterfaceId });
      if (mapped instanceof ResourceNotFoundError) return null;
      throw mapped;
    }
  }

  /** Turns one interface's source/destination check off. Call it only when `nodeTarget` says it is on. */
  async disableSourceDestCheck(networkInterfaceId: string): Promise<void> {
    try {
      await this.client.send(new ModifyNetworkInterfaceAttributeCommand({ NetworkInterfaceId: networkInterfaceId, SourceDestCheck: { Value: false } }));
    } catch (error) {
      throw toPodrouteError(error, { operation: 'ModifyNetworkInterfaceAttribute', subject: networkInterfaceId });
    }
  }

  /** `nodeTarget`, then the primary interface's check turned off if (and only if) it was on. */
  async prepareRouteTarget(instanceId: string): Promise<NodeTarget & { sourceDestCheckChanged: boolean }> {
    const target = await this.nodeTarget(instanceId);
    if (!target.sourceDestCheck) return { ...target, sourceDestCheckChanged: false };
    await this.disableSourceDestCheck(target.primaryEniId);
    return { ...target, sourceDestCheck: false, sourceDestCheckChanged: true };
  }
}
