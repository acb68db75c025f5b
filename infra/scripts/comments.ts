/**
 * What the comments of a TypeScript file are: the lines that hold only comment, the file header,
 * the paths (`lib/x/y.ts`) and the names in paths they mention. test/infra/comments.test.ts checks
 * they exist; `node --import tsx infra/scripts/comments.ts lib` prints the share of comment lines.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import ts from 'typescript';

export interface CommentFacts {
  /** Lines of the file (a trailing newline ends the last line, it does not start one). */
  lines: number;
  /** Lines with comment text and no code. */
  commentLines: number;
  /** Lines of the comments before the first token, blank lines between them included. */
  headerLines: number;
  /** Every comment's text, in order. */
  comments: string[];
}

function lineOf(starts: readonly number[], pos: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] ?? 0) <= pos) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Leaf tokens of the parsed file, end of file included, in order. */
function tokens(node: ts.Node, source: ts.SourceFile, out: ts.Node[] = []): ts.Node[] {
  const children = node.getChildren(source).filter((child) => !ts.isJSDoc(child));
  if (children.length === 0) out.push(node);
  for (const child of children) tokens(child, source, out);
  return out;
}

export function commentFacts(text: string): CommentFacts {
  // Parsed, not scanned: only the parser tells a regular expression or a template from a comment.
  const source = ts.createSourceFile('file.ts', text, ts.ScriptTarget.Latest, true);
  const starts = source.getLineStarts();
  const lines = text.endsWith('\n') ? starts.length - 1 : starts.length;
  const withComment = new Set<number>();
  const withCode = new Set<number>();
  const comments: string[] = [];
  let headerStart = -1;
  let headerEnd = -1;
  for (const token of tokens(source, source)) {
    const start = token.getStart(source);
    for (const range of ts.getLeadingCommentRanges(text, token.pos) ?? []) {
      if (range.end > start) break;
      const from = lineOf(starts, range.pos);
      const to = lineOf(starts, range.end - 1);
      comments.push(text.slice(range.pos, range.end));
      if (withCode.size === 0) {
        if (headerStart < 0) headerStart = from;
        headerEnd = to;
      }
      for (let line = from; line <= to; line++) withComment.add(line);
    }
    if (token.kind === ts.SyntaxKind.EndOfFileToken) continue;
    const end = Math.max(start, token.end - 1);
    for (let line = lineOf(starts, start); line <= lineOf(starts, end); line++) withCode.add(line);
  }
  let commentLines = 0;
  for (const line of withComment) if (!withCode.has(line)) commentLines++;
  return { lines, commentLines, headerLines: headerEnd < 0 ? 0 : headerEnd - headerStart + 1, comments };
}

/** The TypeScript files a comment names (`lib/x/y.ts`, `./y.ts`, `y.ts`); globs are left out. */
export function namedPaths(comment: string): string[] {
  const found = comment.match(/(?<![\w./*-])(?:\.{1,2}\/)*(?:[\w.-]+\/)*[\w-][\w.-]*\.ts(?![\w/*])/g) ?? [];
  return [...new Set(found.filter((path) => !path.includes('*')))];
}

/**
 * The names a comment places in a file: "`name` (path.ts ...)" and "path.ts `name`", comment line
 * breaks joined first. The path is as written; the name is a plain identifier.
 */
export function namedPlaces(comment: string): Array<{ path: string; name: string }> {
  const flat = comment.replace(/\n\s*(?:\*|\/\/)\s*/g, ' ');
  const path = String.raw`((?:\.{1,2}\/|[\w-]+\/)+[\w.-]+\.ts)`;
  const found: Array<{ path: string; name: string }> = [];
  for (const match of flat.matchAll(new RegExp(String.raw`${path},?\s+\`(\w+)\`|\`(\w+)\`\s+\(${path}`, 'g'))) {
    found.push({ path: (match[1] ?? match[4]) as string, name: (match[2] ?? match[3]) as string });
  }
  return found;
}

export function typescriptFiles(root: string, folder: string): string[] {
  return readdirSync(join(root, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name).slice(root.length + 1))
    .sort();
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const root = process.cwd();
  const folders = process.argv.slice(2);
  let lines = 0;
  let commentLines = 0;
  const headers: Array<[number, string]> = [];
  for (const file of folders.flatMap((folder) => typescriptFiles(root, folder))) {
    const facts = commentFacts(readFileSync(join(root, file), 'utf8'));
    lines += facts.lines;
    commentLines += facts.commentLines;
    headers.push([facts.headerLines, file]);
  }
  headers.sort((a, b) => b[0] - a[0]);
  console.log(`comment lines ${commentLines} / ${lines} = ${((100 * commentLines) / lines).toFixed(1)}%`);
  for (const [count, file] of headers.slice(0, 10)) console.log(`header ${count}\t${file}`);
}
