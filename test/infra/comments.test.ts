import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commentFacts, namedPaths, namedPlaces, typescriptFiles } from '../../infra/scripts/comments.ts';

const root = join(import.meta.dirname, '../..');

describe('commentFacts', () => {
  it.each([
    { name: 'no comments', text: 'const a = 1;\n', lines: 1, commentLines: 0, headerLines: 0 },
    { name: 'a block header', text: '/**\n * Holds a.\n */\nconst a = 1;\n', lines: 4, commentLines: 3, headerLines: 3 },
    { name: 'a trailing comment is a code line', text: 'const a = 1; // one\n', lines: 1, commentLines: 0, headerLines: 0 },
    { name: 'a comment after code is no header', text: 'const a = 1;\n// about b\nconst b = 2;\n', lines: 3, commentLines: 1, headerLines: 0 },
    { name: 'slashes in a string', text: "const a = '// not a comment';\n", lines: 1, commentLines: 0, headerLines: 0 },
    { name: 'a regular expression', text: 'const a = /\\/\\*x/;\n', lines: 1, commentLines: 0, headerLines: 0 },
    { name: 'a template with a substitution', text: 'const a = `${1}/* no */`;\n// yes\n', lines: 2, commentLines: 1, headerLines: 0 },
    { name: 'header lines with a blank between', text: '// one\n\n// two\nconst a = 1;\n', lines: 4, commentLines: 2, headerLines: 3 },
  ])('$name', ({ text, lines, commentLines, headerLines }) => {
    expect(commentFacts(text)).toMatchObject({ lines, commentLines, headerLines });
  });
});

describe('namedPaths', () => {
  it.each([
    { comment: '// see lib/routes/route-plan.ts', paths: ['lib/routes/route-plan.ts'] },
    { comment: '// `outcomeOf` (./delivery-outcome.ts) and ../config.ts', paths: ['./delivery-outcome.ts', '../config.ts'] },
    { comment: '// route-plan.ts holds it', paths: ['route-plan.ts'] },
    { comment: '// lib/routes/*.ts and a.tsx and lib/x.ts/y', paths: [] },
    { comment: '// test/a.test.ts, twice: test/a.test.ts', paths: ['test/a.test.ts'] },
  ])('$comment', ({ comment, paths }) => {
    expect(namedPaths(comment)).toEqual(paths);
  });
});

describe('namedPlaces', () => {
  it.each([
    { comment: '// `outcomeOf` (./delivery-outcome.ts)', places: [{ path: './delivery-outcome.ts', name: 'outcomeOf' }] },
    { comment: '// (lib/usecases/absence.ts `pastGrace`)', places: [{ path: 'lib/usecases/absence.ts', name: 'pastGrace' }] },
    { comment: '/**\n * lib/routes/route-rules.ts\n * `wantedVerdict` decides\n */', places: [{ path: 'lib/routes/route-rules.ts', name: 'wantedVerdict' }] },
    { comment: '// `a` and route-plan.ts `b`', places: [] },
  ])('$comment', ({ comment, places }) => {
    expect(namedPlaces(comment)).toEqual(places);
  });
});

/** Every TypeScript file of the repository by its name, outside node_modules and build output. */
const fileNames = new Set(
  ['lib', 'functions', 'infra', 'test', 'bin', 'bench'].flatMap((folder) => typescriptFiles(root, folder)).map((file) => basename(file)),
);

function exists(file: string, path: string): boolean {
  if (!path.includes('/')) return fileNames.has(path);
  if (path.startsWith('.')) return existsSync(join(root, dirname(file), path));
  return existsSync(join(root, path));
}

describe('comments of lib/ and functions/', () => {
  const files = [...typescriptFiles(root, 'lib'), ...typescriptFiles(root, 'functions')];

  it.each(files)('%s names only files that exist', (file) => {
    const { comments } = commentFacts(readFileSync(join(root, file), 'utf8'));
    const missing = comments.flatMap((comment) => namedPaths(comment)).filter((path) => !exists(file, path));
    expect(missing).toEqual([]);
  });

  it.each(files)('%s places each name it mentions in a file that has it', (file) => {
    const { comments } = commentFacts(readFileSync(join(root, file), 'utf8'));
    const wrong = comments.flatMap((comment) => namedPlaces(comment)).filter(({ path, name }) => {
      const at = path.startsWith('.') ? join(root, dirname(file), path) : join(root, path);
      return existsSync(at) && !new RegExp(String.raw`\b${name}\b`).test(readFileSync(at, 'utf8'));
    });
    expect(wrong).toEqual([]);
  });
});
