/** Reading parsed YAML/JSON documents in tests: a mapping is a plain object, checked before use. */
export type Obj = Record<string, unknown>;

export const isObj = (value: unknown): value is Obj => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The value as a mapping, or a failure naming what was expected to be one. */
export const obj = (value: unknown, what: string): Obj => {
  if (!isObj(value)) throw new Error(`${what} is not a mapping`);
  return value;
};
