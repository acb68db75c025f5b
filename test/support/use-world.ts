/**
 * A fresh world of emulators per test, closed after the test. `use` receives it before each test
 * and may add to it (a promise it returns is awaited); `useWorldWithTable` adds one cluster route
 * table first:
 *
 *   let world: World;
 *   let table: string;
 *   useWorldWithTable((parts) => ({ world, table } = parts));
 */
import { afterEach, beforeEach } from 'vitest';
import { startWorld, type World } from './world.ts';

export function useWorld(use: (world: World) => unknown): void {
  let world: World | undefined;
  beforeEach(async () => {
    world = await startWorld();
    await use(world);
  });
  afterEach(async () => {
    await world?.close();
  });
}

export function useWorldWithTable(use: (parts: { world: World; table: string }) => unknown): void {
  useWorld((world) => use({ world, table: world.addClusterTable() }));
}
