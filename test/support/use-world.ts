/**
 * A fresh world of emulators per test with one cluster route table, closed after the test. `use`
 * receives both before each test and may add to the world (a promise it returns is awaited):
 *
 *   let world: World;
 *   let table: string;
 *   useWorldWithTable((parts) => ({ world, table } = parts));
 */
import { afterEach, beforeEach } from 'vitest';
import { startWorld, type World } from './world.ts';

export function useWorldWithTable(use: (parts: { world: World; table: string }) => unknown): void {
  let world: World | undefined;
  beforeEach(async () => {
    world = await startWorld();
    await use({ world, table: world.addClusterTable() });
  });
  afterEach(async () => {
    await world?.close();
  });
}
