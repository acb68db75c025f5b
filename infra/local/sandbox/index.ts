export { EVENT_SOURCE_CALLER, PRODUCTION_CALLERS, SANDBOX_CALLER, startSandbox } from './sandbox.ts';
export type {
  JoinOptions,
  LeaveOptions,
  QueueDepth,
  Sandbox,
  SandboxMode,
  SandboxOptions,
  SandboxQueue,
  SandboxStatus,
  SettleOptions,
} from './types.ts';
export { countState, isConverged, percentile } from './report.ts';
export type { LeaseRecord, NodeRecord, ObservedRoute, ObservedState, RouteCounts, SandboxReport } from './report.ts';
export { HOSTILE_SCENARIOS, isEventScenario, isHostileScenario, runHostile } from './hostile.ts';
export type { HostileScenario } from './hostile.ts';
export { startHttpApi } from './http-api.ts';
export type { HttpApi, HttpApiHandler, HttpApiOptions } from './http-api.ts';
