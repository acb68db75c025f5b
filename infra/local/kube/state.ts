/** What the emulated API server holds: nodes, events, namespaces, users, the resource version, counters, injected failures. */
import type { UserInfo } from './identity.ts';
import type { JsonObject } from './patch.ts';
import type { Failure, WebhookCall } from './types.ts';

export class ServerState {
  readonly nodes = new Map<string, JsonObject>();
  readonly events: JsonObject[] = [];
  /** Namespaces that exist (events may only go to these). */
  readonly namespaces = new Set<string>();
  /** Bearer token -> user. */
  readonly users = new Map<string, UserInfo>();
  readonly webhookCalls: WebhookCall[] = [];
  /** Node DELETEs admitted by the webhook and then refused by the `denyDeletes` share, by name. */
  readonly refused: string[] = [];
  /** Every answered request: its stats key, User-Agent and fieldManager. */
  readonly requests: { key: string; userAgent: string; fieldManager: string | null }[] = [];
  /** Calls per `VERB /path/{template}` key. */
  readonly counts = new Map<string, number>();
  rv = 1;
  failure: (Failure & { remaining: number }) | null = null;

  nextRv(): string {
    return String(++this.rv);
  }

  inc(key: string): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  setFailure(next: Failure | null): void {
    this.failure = next === null ? null : { ...next, remaining: next.times ?? Number.POSITIVE_INFINITY };
  }

  consumeFailure(): void {
    if (!this.failure) return;
    this.failure.remaining -= 1;
    if (this.failure.remaining <= 0) this.failure = null;
  }
}
