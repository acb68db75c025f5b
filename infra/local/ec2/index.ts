export { startEc2Emulator, Ec2EmulatorStats, EC2_NAMESPACE } from './server.ts';
export type { Ec2Emulator, Ec2EmulatorOptions, FaultKind } from './server.ts';
export { Ec2State, Ec2ApiError, ACCOUNT_ID, DEFAULT_ZONE } from './state.ts';
export type { DescribedRoute, InstanceRecord, NetworkInterfaceRecord, RouteTableRecord, SubnetRecord, VpcRecord, Tag } from './state.ts';
export type { BucketSpec, ThrottleOptions } from './throttle.ts';
