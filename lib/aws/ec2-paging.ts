/**
 * EC2's paging, written once: a Describe call answers one page and a `NextToken` while more remain
 * (EC2 API reference, "Pagination": an empty or absent token means the last page). A token seen
 * twice would loop forever; it is a retryable failure instead.
 */
import { PodrouteError } from '../errors.ts';
import { toPodrouteError } from './ec2-errors.ts';

interface Ec2Page<T> {
  items: readonly T[] | undefined;
  nextToken: string | undefined;
}

/**
 * Every item of every page. `fetchPage` sends one request (with the token, when given) and answers
 * that page's items and token; its failures become PodrouteErrors naming `operation`.
 */
export async function allPages<T>(operation: string, fetchPage: (nextToken: string | undefined) => Promise<Ec2Page<T>>): Promise<T[]> {
  const items: T[] = [];
  const seen = new Set<string>();
  let nextToken: string | undefined;
  do {
    let page: Ec2Page<T>;
    try {
      page = await fetchPage(nextToken);
    } catch (error) {
      throw toPodrouteError(error, { operation });
    }
    items.push(...(page.items ?? []));
    nextToken = page.nextToken || undefined;
    if (nextToken !== undefined) {
      if (seen.has(nextToken)) throw new PodrouteError(`EC2 ${operation} returned the same NextToken twice`, { retryable: true });
      seen.add(nextToken);
    }
  } while (nextToken !== undefined);
  return items;
}
