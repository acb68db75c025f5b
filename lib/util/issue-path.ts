/** `RouteTables[0].Routes[2].State` for a zod issue path; `topLevel` when the path is empty. */
export function formatPath(path: readonly PropertyKey[], topLevel: string): string {
  if (path.length === 0) return topLevel;
  let text = '';
  for (const key of path) {
    if (typeof key === 'number') text += `[${key}]`;
    else text += text === '' ? String(key) : `.${String(key)}`;
  }
  return text;
}
