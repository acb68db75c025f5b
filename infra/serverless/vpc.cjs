/* global module */
'use strict';

/**
 * The VPC params, checked when packaging: `subnetIds` and `securityGroupIds` are comma-separated
 * ids and come together or not at all (Lambda's VpcConfig needs both: with subnets but no security
 * group the function has no network access rules, and a security group alone places nothing).
 * CloudFormation `Rules` could say the same, but the framework's schema refuses that section, so
 * the check runs here and serverless.yml reads the values through it:
 * `Default: ${file(./infra/serverless/vpc.cjs):subnetIds}`.
 */
const SUBNETS = /^subnet-[0-9a-f]+(,subnet-[0-9a-f]+)*$/;
const GROUPS = /^sg-[0-9a-f]+(,sg-[0-9a-f]+)*$/;

function vpcParams(subnetIds, securityGroupIds) {
  const subnets = typeof subnetIds === 'string' ? subnetIds.trim() : '';
  const groups = typeof securityGroupIds === 'string' ? securityGroupIds.trim() : '';
  if ((subnets === '') !== (groups === '')) {
    throw new Error('podroute: subnetIds and securityGroupIds must both be set (the functions run in the VPC) or both be empty');
  }
  if (subnets !== '' && !SUBNETS.test(subnets)) {
    throw new Error(`podroute: subnetIds ${JSON.stringify(subnets)} is not a comma-separated list of subnet ids (subnet-0abc,subnet-0def)`);
  }
  if (groups !== '' && !GROUPS.test(groups)) {
    throw new Error(`podroute: securityGroupIds ${JSON.stringify(groups)} is not a comma-separated list of security group ids (sg-0abc)`);
  }
  return { subnetIds: subnets, securityGroupIds: groups };
}

/** Serverless Framework file source. */
module.exports = async ({ resolveVariable }) =>
  vpcParams(await resolveVariable('param:subnetIds'), await resolveVariable('param:securityGroupIds'));
module.exports.vpcParams = vpcParams;
