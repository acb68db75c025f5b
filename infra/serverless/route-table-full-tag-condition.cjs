/* global module, require */
'use strict';

/**
 * IAM condition for the route-table-full mark (lib/routes/table-full.ts): ec2:CreateTags and
 * ec2:DeleteTags only on route tables tagged for this cluster (the cluster tag condition), and only
 * the one key `podroute.io/route-table-full`:
 * - `ForAllValues:StringEquals` on `aws:TagKeys` allows no other key in the request;
 * - `Null: aws:TagKeys = false` requires the request to name keys at all: ForAllValues over an empty
 *   set is true, and a DeleteTags that names no tag removes every tag of the resource.
 * (IAM User Guide, "Controlling access to AWS resources using tags" and "Single-valued vs.
 * multivalued context keys"; EC2 API reference, DeleteTags.)
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- CommonJS, loaded by the Serverless Framework's file source
const { clusterTagCondition } = require('./cluster-tag-condition.cjs');

const ROUTE_TABLE_FULL_TAG = 'podroute.io/route-table-full';

function routeTableFullTagCondition(clusterName) {
  return {
    ...clusterTagCondition(clusterName),
    'ForAllValues:StringEquals': { 'aws:TagKeys': [ROUTE_TABLE_FULL_TAG] },
    Null: { 'aws:TagKeys': 'false' },
  };
}

/** Serverless Framework file source: `${file(./infra/serverless/route-table-full-tag-condition.cjs)}`. */
module.exports = async ({ resolveVariable }) => routeTableFullTagCondition(await resolveVariable('param:clusterName'));
module.exports.routeTableFullTagCondition = routeTableFullTagCondition;
