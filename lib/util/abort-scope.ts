/**
 * The abort signal of the work under way, for adapters to pass to every outside call, so work past
 * an invocation's deadline is aborted, not abandoned: a frozen sandbox resumes its pending callbacks
 * when reused (AWS Lambda Developer Guide, "Lambda execution environment"). The signal follows the
 * async context of `withAbortSignal` (AsyncLocalStorage); outside any scope there is none.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The scope of the work under way: its signal, and whether an adapter may wait out a server's
 * Retry-After (not when the caller has a deadline of seconds, like an admission review).
 */
type Scope = { signal: AbortSignal; retryWaits: boolean };

const scope = new AsyncLocalStorage<Scope>();

/**
 * Runs `work` with `signal` as the signal of every adapter call it makes, however deep; with
 * `retryWaits: false` no adapter sleeps on a Retry-After in it (the call fails retryably instead).
 */
export function withAbortSignal<T>(signal: AbortSignal, work: () => Promise<T>, options: { retryWaits?: boolean } = {}): Promise<T> {
  return scope.run({ signal, retryWaits: options.retryWaits ?? true }, work);
}

/** The signal of the work under way, or undefined outside `withAbortSignal`. */
export function currentAbortSignal(): AbortSignal | undefined {
  return scope.getStore()?.signal;
}

/** Whether the work under way may sleep on a server's Retry-After (true outside any scope). */
export function retryWaitsAllowed(): boolean {
  return scope.getStore()?.retryWaits ?? true;
}

interface SendingClient {
  send(command: never, options?: { abortSignal?: AbortSignal }): Promise<unknown>;
}

/**
 * The client, sending every command with the current abort signal (an explicit `abortSignal` wins).
 * An SDK client aborted mid-call rejects with `AbortError` and starts no retry (its retry
 * middleware races every backoff sleep against the signal).
 */
export function abortable<C extends SendingClient>(client: C): C {
  const send = client.send.bind(client) as (command: unknown, options?: Record<string, unknown>) => Promise<unknown>;
  const withSignal = (command: unknown, options?: Record<string, unknown>) => {
    const signal = currentAbortSignal();
    return send(command, signal === undefined ? options : { abortSignal: signal, ...options });
  };
  return Object.assign(client, { send: withSignal });
}
