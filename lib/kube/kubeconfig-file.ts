/** The kubeconfig the CLI commands run with: a file (else the default one), on a context when given. */
import { KubeConfig } from '@kubernetes/client-node';
import { InvalidInputError } from '../errors.ts';

/** The kubeconfig at `path` (else the default one), on `context` when given; a clear error when it cannot be used. */
export function loadKubeConfig(path: string | undefined, context: string | undefined): KubeConfig {
  const kubeConfig = new KubeConfig();
  try {
    if (path) kubeConfig.loadFromFile(path);
    else kubeConfig.loadFromDefault();
    if (context) kubeConfig.setCurrentContext(context);
  } catch (error) {
    throw new InvalidInputError(`cannot load the kubeconfig: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  if (!kubeConfig.getCurrentCluster()) throw new InvalidInputError('the kubeconfig has no current cluster (pass --kubeconfig or --context)');
  return kubeConfig;
}
