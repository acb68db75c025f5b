/**
 * The primary network interfaces of instances with their own tags, for `podroute doctor`: the
 * worker's IAM statement (serverless.yml, Sid SourceDestCheck) allows ModifyNetworkInterfaceAttribute
 * only on interfaces tagged `kubernetes.io/cluster/<name>`, and DescribeInstances omits those tags,
 * so this reads DescribeNetworkInterfaces (EC2 API reference, NetworkInterface.TagSet).
 */
import { DescribeNetworkInterfacesCommand } from '@aws-sdk/client-ec2';
import type { EC2Client, NetworkInterface } from '@aws-sdk/client-ec2';
import type { PrimaryInterfaces } from '../usecases/ports.ts';
import { allPages } from './ec2-paging.ts';

interface PrimaryInterface {
  instanceId: string;
  networkInterfaceId: string;
  tags: Record<string, string>;
}

/** Instance ids per call: well under EC2's limit of values in one filter. */
const IDS_PER_CALL = 100;

export class Ec2PrimaryInterfaces implements PrimaryInterfaces {
  constructor(
    private readonly client: EC2Client,
    private readonly pageSize = 1000,
  ) {}

  /** The primary interface (device index 0 on network card 0) of each listed instance that has one. */
  async primaryInterfaces(instanceIds: readonly string[]): Promise<PrimaryInterface[]> {
    const unique = [...new Set(instanceIds)];
    const found: PrimaryInterface[] = [];
    for (let start = 0; start < unique.length; start += IDS_PER_CALL) {
      for (const eni of await this.describe(unique.slice(start, start + IDS_PER_CALL))) {
        const attachment = eni.Attachment;
        if (!eni.NetworkInterfaceId || !attachment?.InstanceId || attachment.DeviceIndex !== 0 || (attachment.NetworkCardIndex ?? 0) !== 0) continue;
        const tags: Record<string, string> = {};
        for (const tag of eni.TagSet ?? []) if (tag.Key !== undefined) tags[tag.Key] = tag.Value ?? '';
        found.push({ instanceId: attachment.InstanceId, networkInterfaceId: eni.NetworkInterfaceId, tags });
      }
    }
    return found;
  }

  private describe(instanceIds: string[]): Promise<NetworkInterface[]> {
    const filters = [
      { Name: 'attachment.instance-id', Values: instanceIds },
      { Name: 'attachment.device-index', Values: ['0'] },
    ];
    return allPages('DescribeNetworkInterfaces', async (nextToken) => {
      const out = await this.client.send(new DescribeNetworkInterfacesCommand({ Filters: filters, MaxResults: this.pageSize, ...(nextToken ? { NextToken: nextToken } : {}) }));
      return { items: out.NetworkInterfaces, nextToken: out.NextToken };
    });
  }
}
