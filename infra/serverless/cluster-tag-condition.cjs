/* global module */
'use strict';

/**
 * IAM condition that limits an EC2 write to resources tagged for this cluster.
 *
 * The tag key holds the cluster name (`kubernetes.io/cluster/<name>`), and the Serverless Framework
 * resolves variables in YAML values only, never in keys; so serverless.yml loads this condition
 * with `${file(./infra/serverless/cluster-tag-condition.cjs)}` and this file builds the key.
 *
 * The condition tests that the tag is present, whatever its value (`owned` or `shared` by
 * convention): the route planner treats every table that carries the key as the cluster's own.
 * `StringLike` on a missing key is false, so an untagged resource is denied. IAM accepts tag keys
 * with `/` in `aws:ResourceTag/<key>`; a cluster name never contains `*` or `?` (lib/config.ts).
 */
const CLUSTER_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$/;

function clusterTagCondition(clusterName) {
  if (typeof clusterName !== 'string' || !CLUSTER_NAME.test(clusterName)) {
    throw new Error(`podroute: clusterName ${JSON.stringify(clusterName)} is not a cluster name (letters, digits, - _ .)`);
  }
  return { StringLike: { [`aws:ResourceTag/kubernetes.io/cluster/${clusterName}`]: '*' } };
}

/** Serverless Framework file source: `${file(./infra/serverless/cluster-tag-condition.cjs)}`. */
module.exports = async ({ resolveVariable }) => clusterTagCondition(await resolveVariable('param:clusterName'));
module.exports.clusterTagCondition = clusterTagCondition;
