export {
  INVALID_MODE_EVENT,
  INVALID_POD_CIDR,
  MISMATCH_EVENT,
  NodeSyncError,
  SYNC_MODES,
  syncNode,
} from './node-sync.ts';
export type {
  CloudAlias,
  KubeNodes,
  NodeSyncDeps,
  NodeSyncErrorCode,
  NodeSyncOp,
  SyncMode,
  WarningReason,
} from './node-sync.ts';
export { syncNodeDualStack } from './dual-stack.ts';
export type { DualStackCloudAlias, DualStackKubeNodes, DualStackSyncDeps } from './dual-stack.ts';
