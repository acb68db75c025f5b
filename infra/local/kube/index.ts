export { startKubeEmulator } from './emulator.ts';
export type {
  Failure,
  KubeConfigOptions,
  KubeEmulator,
  KubeEmulatorOptions,
  KubeEmulatorState,
  KubeEmulatorStats,
  WebhookCall,
  WebhookTarget,
} from './emulator.ts';
