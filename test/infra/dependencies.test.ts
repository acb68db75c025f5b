/**
 * Every runtime dependency is imported by shipped code (lib/, functions/), statically or with a
 * dynamic import(), and every one is pinned to an exact version.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
const dependencies = Object.entries(pkg.dependencies ?? {});

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => readFileSync(join(entry.parentPath, entry.name), 'utf8'));
}

const shipped = [...sources('lib'), ...sources('functions')];
/** Specifiers of value imports and re-exports (`import type` is erased, so it does not count) and of import(). */
function runtimeSpecifiers(text: string): string[] {
  const statements = [...text.matchAll(/\b(?:import|export)\s+(type\s+)?[^;'"]*?\bfrom\s*['"]([^'"]+)['"]/g)]
    .filter((m) => m[1] === undefined)
    .map((m) => m[2] ?? '');
  const bare = [...text.matchAll(/^import\s*['"]([^'"]+)['"]/gm)].map((m) => m[1] ?? '');
  const dynamic = [...text.matchAll(/\bimport\s*\(\s*['"]([^'"]+)['"]/g)].map((m) => m[1] ?? '');
  return [...statements, ...bare, ...dynamic];
}
const specifiers = new Set(shipped.flatMap(runtimeSpecifiers));
const packageOf = (specifier: string): string =>
  specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : (specifier.split('/')[0] ?? specifier);
const imported = new Set([...specifiers].filter((s) => !s.startsWith('.') && !s.startsWith('node:')).map(packageOf));

describe('runtime dependencies', () => {
  it('has some', () => {
    expect(dependencies.length).toBeGreaterThan(0);
  });

  it.each(dependencies)('%s is imported by lib/ or functions/', (name) => {
    expect(imported).toContain(name);
  });

  it.each(dependencies)('%s is pinned exactly (%s)', (_name, version) => {
    expect(version).toMatch(/^\d+\.\d+\.\d+(-[\w.]+)?$/);
  });
});
