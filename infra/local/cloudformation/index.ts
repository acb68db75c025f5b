/**
 * A local CloudFormation endpoint with the one read `podroute doctor` makes: DescribeStackResources
 * (AWS CloudFormation API Reference) over the Query protocol (../aws-query/server.ts), for stacks a
 * test defines. `StackName` is required here (the API also takes a PhysicalResourceId; podroute
 * never sends one); a stack that does not exist is `ValidationError` "Stack with id <name> does not
 * exist" (HTTP 400); each resource carries StackName, StackId (an ARN with the account), its
 * logical and physical ids, type, status and timestamp. Test infrastructure.
 */
import { ACCOUNT_ID } from '../ec2/records.ts';
import { QueryError, requiredParam, startQueryServer, xml } from '../aws-query/server.ts';

export interface StackResource {
  logicalId: string;
  type: string;
  physicalId: string;
}

export interface CloudFormationEmulator {
  url: string;
  /** Defines (or redefines) a stack in us-east-1; returns its StackId. */
  putStack(name: string, resources: StackResource[]): string;
  removeStack(name: string): void;
  calls(): string[];
  close(): Promise<void>;
}

const NAMESPACE = 'http://cloudformation.amazonaws.com/doc/2010-05-15/';

export async function startCloudFormationEmulator(): Promise<CloudFormationEmulator> {
  const stacks = new Map<string, { id: string; resources: StackResource[] }>();
  const describeStackResources = (params: URLSearchParams): string => {
    const name = requiredParam(params, 'StackName');
    const stack = stacks.get(name) ?? [...stacks.values()].find((s) => s.id === name);
    if (!stack) throw new QueryError('ValidationError', `Stack with id ${name} does not exist`);
    const stackName = stack.id.split('/')[1] ?? name;
    // The API answers only the first 100 resources of a stack (CloudFormation API Reference).
    const members = stack.resources.slice(0, 100).map(
      (r) =>
        `<member>${xml('StackName', stackName)}${xml('StackId', stack.id)}${xml('LogicalResourceId', r.logicalId)}${xml('PhysicalResourceId', r.physicalId)}` +
        `${xml('ResourceType', r.type)}${xml('Timestamp', '2026-01-01T00:00:00.000Z')}${xml('ResourceStatus', 'CREATE_COMPLETE')}</member>`,
    );
    return `<StackResources>${members.join('')}</StackResources>`;
  };
  const server = await startQueryServer({ version: '2010-05-15', namespace: NAMESPACE, actions: { DescribeStackResources: describeStackResources } });
  return {
    url: server.url,
    calls: server.calls,
    close: server.close,
    putStack: (name, resources) => {
      const id = `arn:aws:cloudformation:us-east-1:${ACCOUNT_ID}:stack/${name}/00000000-0000-4000-8000-${String(stacks.size + 1).padStart(12, '0')}`;
      stacks.set(name, { id, resources });
      return id;
    },
    removeStack: (name) => void stacks.delete(name),
  };
}
