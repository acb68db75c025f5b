/**
 * MemoryDeletionWindow: the DeletionWindowStore port (lib/usecases/ports.ts) in memory, written as
 * DynamoDbDeletionWindow writes its item: only over the version read (0: none stored yet), each
 * write adding one to the version, a stale write refused with false and nothing written.
 */
import type { GuardWindow } from '../../lib/routes/deletion-guard.ts';
import type { DeletionWindowStore } from '../../lib/usecases/ports.ts';

export class MemoryDeletionWindow implements DeletionWindowStore {
  private stored: { window: GuardWindow; version: number } = { window: { runs: [] }, version: 0 };
  /** Writes refused because another run wrote first. */
  refused = 0;

  async read(): Promise<{ window: GuardWindow; version: number }> {
    return structuredClone(this.stored);
  }

  async write(window: GuardWindow, version: number): Promise<boolean> {
    if (version !== this.stored.version) {
      this.refused += 1;
      return false;
    }
    this.stored = { window: structuredClone({ runs: window.runs }), version: version + 1 };
    return true;
  }
}
