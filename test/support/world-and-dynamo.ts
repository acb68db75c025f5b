/**
 * The setup most use-case tests share: one local DynamoDB (dynalite) per file, a fresh world of
 * emulators per test, both closed after. `use` receives them before each test:
 *
 *   let world: World;
 *   let local: LocalDynamo;
 *   useWorldAndDynamo((parts) => ({ world, local } = parts));
 */
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { startDynalite, type LocalDynamo } from './dynalite.ts';
import { startWorld, type World } from './world.ts';

export function useWorldAndDynamo(use: (parts: { world: World; local: LocalDynamo }) => void): void {
  let local: LocalDynamo | undefined;
  let world: World | undefined;
  beforeAll(async () => {
    local = await startDynalite();
  });
  afterAll(async () => {
    await local?.close();
  });
  beforeEach(async () => {
    world = await startWorld();
    if (!local) throw new Error('the local DynamoDB did not start');
    use({ world, local });
  });
  afterEach(async () => {
    await world?.close();
  });
}
