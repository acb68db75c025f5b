/** The NodeSource contract against the fake and against KubeNodes over the Kubernetes emulator. */
import { afterAll } from 'vitest';
import { startKubeEmulator, type KubeEmulator } from '../../infra/local/kube/index.ts';
import { createKubeConfig } from '../../lib/kube/kube-config.ts';
import { KubeNodes } from '../../lib/kube/kube-nodes.ts';
import { MemoryNodeSource } from '../fakes/memory-node-source.ts';
import { nodeSourceContract } from './node-source.contract.ts';

nodeSourceContract('MemoryNodeSource', async () => {
  const port = new MemoryNodeSource();
  return {
    port,
    store: async (object) => void port.put(object),
    remove: async (name) => port.delete(name),
    eventReasons: (name) => port.eventReasons(name),
  };
});

let kube: KubeEmulator | undefined;
afterAll(async () => {
  await kube?.close();
});

nodeSourceContract('KubeNodes over the Kubernetes emulator', async () => {
  // One emulator for the file; each case its own nodes, so the emulator is emptied first.
  kube ??= await startKubeEmulator();
  for (const node of kube.state.nodes()) await kube.state.deleteNode(String((node.metadata as { name: string }).name), { admit: false });
  const emulator = kube;
  const port = new KubeNodes(await createKubeConfig({ kind: 'options', options: emulator.kubeConfig(emulator.podrouteToken) }), { conflictBackoffMs: 0 });
  const since = emulator.state.events().length;
  return {
    port,
    store: async (object) => void (await emulator.state.addNode(object, { admit: false })),
    remove: async (name) => void (await emulator.state.deleteNode(name, { admit: false })),
    eventReasons: (name) =>
      emulator.state
        .events()
        .slice(since)
        .filter((e) => (e.involvedObject as { name?: string } | undefined)?.name === name && e.type === 'Warning')
        .map((e) => String(e.reason)),
  };
});
