/** What every test world shares, free of emulators: the cluster's name and tag, and a fake clock. */
export const CLUSTER = 'alpha';
export const CLUSTER_TAG = `kubernetes.io/cluster/${CLUSTER}`;
/** 2026-01-01T00:00:00Z: where every fake clock starts. */
export const T0 = Date.UTC(2026, 0, 1);

/** A clock that moves only when told to. */
export class FakeClock {
  constructor(public ms: number = T0) {}
  readonly now = (): number => this.ms;
  advance(ms: number): void {
    this.ms += ms;
  }
}
