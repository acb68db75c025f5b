// A module hook for `node --import`: resolving the AWS SDK, Smithy or the Kubernetes client fails,
// so a command that still prints and exits 0 has not loaded them (test/cli/lazy-load.test.ts).
import { register } from 'node:module';

const hook = `
export async function resolve(specifier, context, next) {
  if (/^(@aws-sdk|@smithy)\\/|^@kubernetes\\/client-node/.test(specifier)) {
    throw new Error('deny-sdk: ' + specifier + ' was loaded');
  }
  return next(specifier, context);
}`;
register(`data:text/javascript,${encodeURIComponent(hook)}`);
