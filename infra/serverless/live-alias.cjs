/* global module */
'use strict';

/**
 * Local Serverless Framework plugin: every function gets a Lambda alias `live` that points at the
 * version this deployment published, and every trigger (schedule, SQS event source mapping, HTTP
 * API integration and their invoke permissions) targets that alias instead of the unqualified
 * function. A rollback is then one command that moves the alias back to an older version:
 *
 *   aws lambda update-alias --function-name <name> --name live --function-version <n>
 *
 * It uses the framework's own alias hook (`functionObject.targetAlias`, which the event compilers
 * of osls and serverless v3 honour, as they do for provisioned concurrency), so the triggers are
 * compiled against the alias rather than rewritten afterwards. Needs `provider.versionFunctions:
 * true`: an alias can only name a published version (Lambda API CreateAlias FunctionVersion).
 */
const ALIAS = 'live';

const capitalized = (name) => name.charAt(0).toUpperCase() + name.slice(1);

class LiveAliasPlugin {
  constructor(serverless) {
    this.serverless = serverless;
    this.hooks = {
      'before:package:compileFunctions': () => this.markTargets(),
      'after:package:compileFunctions': () => this.addAliases(),
    };
  }

  naming() {
    return this.serverless.getProvider('aws').naming;
  }

  functions() {
    const service = this.serverless.service;
    return service.getAllFunctions().map((name) => ({ name, object: service.getFunction(name) }));
  }

  markTargets() {
    if (this.serverless.service.provider.versionFunctions !== true) {
      throw new Error('podroute live-alias: provider.versionFunctions must be true (an alias needs a published version)');
    }
    for (const { name, object } of this.functions()) {
      if (object.targetAlias || object.provisionedConcurrency || object.snapStart) {
        throw new Error(`podroute live-alias: function ${name} already has an alias of the framework`);
      }
      object.targetAlias = { name: ALIAS, logicalId: `${this.naming().getNormalizedFunctionName(name)}LambdaAlias${capitalized(ALIAS)}` };
    }
  }

  addAliases() {
    const resources = this.serverless.service.provider.compiledCloudFormationTemplate.Resources;
    for (const { name, object } of this.functions()) {
      const functionLogicalId = this.naming().getLambdaLogicalId(name);
      const versions = Object.keys(resources).filter((id) => {
        const resource = resources[id];
        return resource.Type === 'AWS::Lambda::Version' && resource.Properties?.FunctionName?.Ref === functionLogicalId;
      });
      if (versions.length !== 1) {
        throw new Error(`podroute live-alias: expected one AWS::Lambda::Version of ${functionLogicalId}, found ${versions.length}`);
      }
      resources[object.targetAlias.logicalId] = {
        Type: 'AWS::Lambda::Alias',
        Properties: {
          FunctionName: { Ref: functionLogicalId },
          FunctionVersion: { 'Fn::GetAtt': [versions[0], 'Version'] },
          Name: ALIAS,
          Description: 'What the triggers invoke; move it to roll back',
        },
      };
    }
  }
}

module.exports = LiveAliasPlugin;
module.exports.ALIAS = ALIAS;
