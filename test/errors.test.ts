/** One error base (STYLE.md): every podroute error is a PodrouteError that says whether a retry helps. */
import { describe, expect, it } from 'vitest';
import { RetryLater } from '../functions/route-worker.ts';
import { CidrError, parseCidr } from '../lib/cidr/cidr.ts';
import { PodrouteError } from '../lib/errors.ts';
import { CidrSetError, createCidrSet } from '../lib/ipam/index.ts';

async function thrown(run: () => unknown): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('one error base', () => {
  it.each<[string, () => unknown, string, string | undefined, boolean]>([
    ['CidrError from parseCidr', () => parseCidr('10.0.0.0/33'), 'CidrError', 'INVALID_CIDR', false],
    ['CidrSetError from a full set', async () => {
      const set = await createCidrSet({ clusterCidr: '10.0.0.0/24', nodeMaskSize: 24 });
      await set.allocateNext('a');
      await set.allocateNext('b');
    }, 'CidrSetError', 'FULL', false],
    ['RetryLater', () => { throw new RetryLater('deadline'); }, 'RetryLater', undefined, true],
  ])('%s extends PodrouteError, keeps its name and code', async (_desc, run, name, code, retryable) => {
    const error = await thrown(run);
    expect(error).toBeInstanceOf(PodrouteError);
    expect(error).toMatchObject({ name, retryable });
    expect((error as { code?: unknown }).code).toBe(code);
  });

  it('keeps the cause', () => {
    const cause = new Error('root');
    expect(new CidrError('bad', { cause }).cause).toBe(cause);
    expect(new CidrSetError('FULL', 'full', { cause }).cause).toBe(cause);
  });
});
