/**
 * Reading an EC2 Query request's form parameters (`Name.N` lists, `Filter.N`, paging) and the
 * tag set every resource's XML carries; shared by the emulator's actions.
 */
import { Ec2ApiError } from './state.ts';
import type { Ec2State, Tag } from './state.ts';
import { el, set } from './xml.ts';
import type { Xml, XmlContent } from './xml.ts';

export type Params = ReadonlyMap<string, string>;
export type ActionHandler = (params: Params, state: Ec2State) => XmlContent;

// ----- parameter helpers -----

export function required(params: Params, name: string): string {
  const value = params.get(name);
  if (value === undefined || value === '') throw new Ec2ApiError('MissingParameter', `The request must contain the parameter ${name}`);
  return value;
}

export function optional(params: Params, name: string): string | undefined {
  const value = params.get(name);
  return value === undefined || value === '' ? undefined : value;
}

/** Values of `Name.1`, `Name.2`, ... in index order. */
export function list(params: Params, name: string): string[] {
  const found: [number, string][] = [];
  const pattern = new RegExp(`^${name.replace('.', '\\.')}\\.(\\d+)$`);
  for (const [key, value] of params) {
    const m = pattern.exec(key);
    if (m?.[1] !== undefined) found.push([Number(m[1]), value]);
  }
  return found.sort((a, b) => a[0] - b[0]).map(([, value]) => value);
}

export interface Filter {
  name: string;
  values: string[];
}

/** `Filter.N.Name` / `Filter.N.Value.M`. */
export function filters(params: Params): Filter[] {
  const indices = new Set<number>();
  for (const key of params.keys()) {
    const m = /^Filter\.(\d+)\.Name$/.exec(key);
    if (m?.[1] !== undefined) indices.add(Number(m[1]));
  }
  return [...indices]
    .sort((a, b) => a - b)
    .map((i) => ({ name: required(params, `Filter.${i}.Name`), values: list(params, `Filter.${i}.Value`) }));
}

export function optionalInt(params: Params, name: string): number | undefined {
  const value = optional(params, name);
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new Ec2ApiError('InvalidParameterValue', `Value (${value}) for parameter ${name} is invalid.`);
  return Number(value);
}

export function bool(value: string, name: string): boolean {
  const lower = value.toLowerCase();
  if (lower === 'true') return true;
  if (lower === 'false') return false;
  throw new Ec2ApiError('InvalidParameterValue', `Value (${value}) for parameter ${name} is invalid. Expected 'true' or 'false'.`);
}

/** EC2 filter values allow `*` (any run) and `?` (one character). */
function matches(pattern: string, value: string | undefined): boolean {
  if (value === undefined) return false;
  const re = new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
  return re.test(value);
}

/** Keeps the resources that pass every filter (values of one filter are ORed). */
export function applyFilters<T>(items: T[], given: Filter[], fields: Record<string, (item: T) => (string | undefined)[]>, tags?: (item: T) => Tag[]): T[] {
  const tests = given.map((filter) => {
    if (tags && filter.name === 'tag-key') {
      return (item: T) => tags(item).some((t) => filter.values.some((v) => matches(v, t.key)));
    }
    if (tags && filter.name === 'tag-value') {
      return (item: T) => tags(item).some((t) => filter.values.some((v) => matches(v, t.value)));
    }
    if (tags && filter.name.startsWith('tag:')) {
      const key = filter.name.slice(4);
      return (item: T) => tags(item).some((t) => t.key === key && filter.values.some((v) => matches(v, t.value)));
    }
    const field = fields[filter.name];
    if (!field) throw new Ec2ApiError('InvalidParameterValue', `The filter '${filter.name}' is invalid`);
    return (item: T) => field(item).some((actual) => filter.values.some((v) => matches(v, actual)));
  });
  return items.filter((item) => tests.every((test) => test(item)));
}

/** Offset pagination behind an opaque token, as EC2's MaxResults/NextToken. */
export function paginate<T>(action: string, items: T[], params: Params, limits: { min: number; max: number }): { page: T[]; nextToken?: string } {
  const maxResults = optionalInt(params, 'MaxResults');
  const token = optional(params, 'NextToken');
  if (maxResults !== undefined && (maxResults < limits.min || maxResults > limits.max)) {
    throw new Ec2ApiError('InvalidParameterValue', `Value ( ${maxResults} ) for parameter maxResults is invalid. Parameter must be between ${limits.min} and ${limits.max}.`);
  }
  let offset = 0;
  if (token !== undefined) {
    const decoded = /^(\w+):(\d+)$/.exec(Buffer.from(token, 'base64url').toString('utf8'));
    if (!decoded || decoded[1] !== action) throw new Ec2ApiError('InvalidPaginationToken', 'The specified pagination token is not valid or is expired.');
    offset = Number(decoded[2]);
  }
  if (maxResults === undefined) return { page: items.slice(offset) };
  const page = items.slice(offset, offset + maxResults);
  const next = offset + maxResults;
  return next < items.length ? { page, nextToken: Buffer.from(`${action}:${next}`, 'utf8').toString('base64url') } : { page };
}

export const tagSet = (tags: Tag[]): Xml => set('tagSet', tags, (t) => [el('key', t.key), el('value', t.value)]);
