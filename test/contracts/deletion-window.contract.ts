/**
 * The DeletionWindowStore contract (lib/usecases/ports.ts): the mass-deletion guard's window, written
 * only over the version read, run against MemoryDeletionWindow and DynamoDbDeletionWindow over
 * dynalite (deletion-window.contract.test.ts).
 */
import { describe, expect, it } from 'vitest';
import type { DeletionWindowStore } from '../../lib/usecases/ports.ts';

const run = (at: number, deleted: string[]) => ({ at, live: 28, deleted });

export function deletionWindowContract(name: string, make: () => Promise<DeletionWindowStore>): void {
  describe(`DeletionWindowStore contract: ${name}`, () => {
    it('starts empty at version 0 and reads back what was written, one version later', async () => {
      const store = await make();
      expect(await store.read()).toEqual({ window: { runs: [] }, version: 0 });
      expect(await store.write({ runs: [run(1, ['rtb-1|100.64.0.0/24'])] }, 0)).toBe(true);
      expect(await store.read()).toEqual({ window: { runs: [run(1, ['rtb-1|100.64.0.0/24'])] }, version: 1 });
      expect(await store.write({ runs: [run(1, ['rtb-1|100.64.0.0/24']), run(2, [])] }, 1)).toBe(true);
      expect(await store.read()).toEqual({ window: { runs: [run(1, ['rtb-1|100.64.0.0/24']), run(2, [])] }, version: 2 });
    });

    it('refuses a write over a version another run replaced, writing nothing', async () => {
      const store = await make();
      expect(await store.write({ runs: [run(1, ['rtb-1|100.64.0.0/24'])] }, 0)).toBe(true);
      // Two runs read version 1; the first to write wins, the second is told so.
      expect(await store.write({ runs: [run(2, ['rtb-1|100.64.1.0/24'])] }, 1)).toBe(true);
      expect(await store.write({ runs: [run(3, ['rtb-1|100.64.2.0/24'])] }, 1)).toBe(false);
      expect(await store.write({ runs: [] }, 0)).toBe(false);
      expect(await store.write({ runs: [] }, 7)).toBe(false);
      expect(await store.read()).toEqual({ window: { runs: [run(2, ['rtb-1|100.64.1.0/24'])] }, version: 2 });
    });

    it('answers a copy: changing what was read changes nothing stored', async () => {
      const store = await make();
      await store.write({ runs: [run(1, ['rtb-1|100.64.0.0/24'])] }, 0);
      const read = await store.read();
      (read.window.runs[0]?.deleted as string[] | undefined)?.push('rtb-1|100.64.9.0/24');
      expect((await store.read()).window.runs[0]?.deleted).toEqual(['rtb-1|100.64.0.0/24']);
    });
  });
}
