export { startEc2Emulator, Ec2EmulatorStats, EC2_NAMESPACE } from './server.ts';
export type { Ec2Emulator, Ec2EmulatorOptions, FaultKind } from './server.ts';
export { Ec2State, Ec2ApiError, ACCOUNT_ID, DEFAULT_ZONE } from './state.ts';
export type {
  DescribedRoute,
  InstanceRecord,
  NetworkInterfaceRecord,
  ReservationRecord,
  ReservationType,
  RouteTargetFields,
  RouteTableRecord,
  SubnetRecord,
  VpcRecord,
  Tag,
} from './state.ts';
export type { BucketSpec, ThrottleOptions } from './throttle.ts';
export { ASSIGN_PREFIX_BUCKETS, ACTION_BUCKETS, DEFAULT_MUTATING, DEFAULT_NON_MUTATING, bucketFor, minimumSeconds } from './buckets.ts';
export { INSTANCE_TYPE_LIMITS, DEFAULT_INSTANCE_TYPE, limitsOf } from './instance-types.ts';
export type { InterfaceLimits } from './instance-types.ts';
