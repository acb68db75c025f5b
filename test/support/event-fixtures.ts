/** EventBridge event fixtures (test/fixtures/eventbridge) and a path editor to corrupt them, for the cloud-events tests. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

type Json = Record<string, unknown>;

export const eventFixture = (name: 'instance-state-change.json' | 'cloudtrail-delete-route.json'): Json =>
  JSON.parse(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'eventbridge', name), 'utf8')) as Json;

/** A copy of `event` with each dotted path set to its value (`undefined` deletes it). */
export function edited(event: Json, changes: Record<string, unknown>): Json {
  const copy = structuredClone(event);
  for (const [path, value] of Object.entries(changes)) {
    const keys = path.split('.');
    const last = keys.pop() ?? '';
    let at: Json = copy;
    for (const key of keys) {
      const next = at[key];
      if (typeof next !== 'object' || next === null) at[key] = {};
      at = at[key] as Json;
    }
    if (value === undefined) delete at[last];
    else at[last] = value;
  }
  return copy;
}
