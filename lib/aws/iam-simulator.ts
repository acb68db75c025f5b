/**
 * What a role's policies allow, asked of IAM without calling the actions: SimulatePrincipalPolicy
 * (IAM API Reference) on the role's ARN, with the resource ARNs and the condition keys the
 * statements test given as ContextEntries (IAM does not read a resource's tags in a simulation; a
 * key not given is returned in MissingContextValues). Results come in pages (IsTruncated, Marker).
 * The caller needs iam:SimulatePrincipalPolicy; nothing is written.
 */
import { type IAMClient, SimulatePrincipalPolicyCommand } from '@aws-sdk/client-iam';

export interface SimulationQuestion {
  principalArn: string;
  actions: readonly string[];
  resourceArns: readonly string[];
  /** String condition keys and their value, e.g. `aws:ResourceTag/<key>`. */
  context: Readonly<Record<string, string>>;
}

export interface SimulationAnswer {
  action: string;
  resource: string;
  /** `allowed`, `explicitDeny` or `implicitDeny`. */
  decision: string;
  missingContext: string[];
}

export class IamPolicySimulator {
  constructor(private readonly client: IAMClient) {}

  async simulate(question: SimulationQuestion): Promise<SimulationAnswer[]> {
    const answers: SimulationAnswer[] = [];
    let marker: string | undefined;
    do {
      const out = await this.client.send(
        new SimulatePrincipalPolicyCommand({
          PolicySourceArn: question.principalArn,
          ActionNames: [...question.actions],
          ResourceArns: [...question.resourceArns],
          ContextEntries: Object.entries(question.context).map(([key, value]) => ({ ContextKeyName: key, ContextKeyValues: [value], ContextKeyType: 'string' })),
          Marker: marker,
        }),
      );
      for (const result of out.EvaluationResults ?? []) {
        answers.push({
          action: result.EvalActionName ?? '',
          resource: result.EvalResourceName ?? '*',
          decision: result.EvalDecision ?? 'implicitDeny',
          missingContext: result.MissingContextValues ?? [],
        });
      }
      marker = out.IsTruncated ? out.Marker : undefined;
    } while (marker);
    return answers;
  }
}
