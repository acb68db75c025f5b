// The docs hold together: every relative link and #anchor in README.md, the docs folder,
// bench/README.md and every README under infra resolves (anchors by GitHub's heading slugs), every
// docs path that code or config names exists, and the README stays short. No network.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');
const read = (path: string): string => readFileSync(join(root, path), 'utf8');

function walk(dir: string, keep: (path: string) => boolean): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : walk(path, keep);
    return keep(path) ? [path] : [];
  });
}

const markdownFiles = [
  'README.md',
  'bench/README.md',
  ...walk('docs', (p) => p.endsWith('.md')),
  ...walk('infra', (p) => p.endsWith('README.md')),
];

/** The lines outside fenced code blocks (``` or ~~~), where links and headings count. */
function proseLines(text: string): string[] {
  let fence: string | undefined;
  return text.split('\n').filter((line) => {
    const marker = /^\s*(```|~~~)/.exec(line)?.[1];
    if (marker && (fence === undefined || fence === marker)) {
      fence = fence === undefined ? marker : undefined;
      return false;
    }
    return fence === undefined;
  });
}

/**
 * GitHub's heading anchor: the heading's text (inline markup and link targets dropped), lower-cased,
 * punctuation removed except `-` and `_`, each space a `-`; a repeated slug gets `-1`, `-2`, ...
 */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/[`*]/g, '');
  return text.trim().toLowerCase().replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '').replace(/\s/g, '-');
}

function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const line of proseLines(text)) {
    for (const named of line.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(named[1] ?? '');
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1] ?? '');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Link targets: inline `[text](target)` and reference definitions `[name]: target`, code spans dropped. */
function linksOf(text: string): string[] {
  return proseLines(text).flatMap((line) => {
    const prose = line.replace(/`[^`]*`/g, '');
    const inline = [...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] ?? '');
    const reference = /^\s*\[[^\]]+\]:\s*(\S+)/.exec(prose)?.[1];
    return reference ? [...inline, reference] : inline;
  });
}

const EXTERNAL = /^[a-z][a-z0-9+.-]*:/i;

/** What is wrong with one link of `file`, or undefined when it resolves. */
function brokenLink(file: string, target: string): string | undefined {
  if (EXTERNAL.test(target)) return undefined;
  const [pathPart, anchor] = target.split('#', 2) as [string, string | undefined];
  const resolved = pathPart === '' ? file : join(dirname(file), decodeURIComponent(pathPart));
  if (relative(root, join(root, resolved)).startsWith('..')) return `${target}: outside the repository`;
  if (!existsSync(join(root, resolved))) return `${target}: no file ${resolved}`;
  if (anchor === undefined || anchor === '') return undefined;
  if (statSync(join(root, resolved)).isDirectory() || !resolved.endsWith('.md')) return undefined;
  return anchorsOf(read(resolved)).has(anchor) ? undefined : `${target}: no heading #${anchor} in ${resolved}`;
}

describe('slug (GitHub heading anchors)', () => {
  it.each([
    ['Quick start', 'quick-start'],
    ['The `plan` command', 'the-plan-command'],
    ['What podroute trusts', 'what-podroute-trusts'],
    ['Upgrade and rollback', 'upgrade-and-rollback'],
    ['0.2.0 to the next release (unreleased)', '020-to-the-next-release-unreleased'],
    ['`reconcile-heartbeat`', 'reconcile-heartbeat'],
    ['Deploy: EKS, step 1', 'deploy-eks-step-1'],
    ['Migration from kube-controller-manager', 'migration-from-kube-controller-manager'],
    ['A [linked](x.md) heading', 'a-linked-heading'],
    ['snake_case stays', 'snake_case-stays'],
  ])('%s -> %s', (heading, expected) => {
    expect(slug(heading)).toBe(expected);
  });

  it('numbers a repeated heading as GitHub does', () => {
    expect([...anchorsOf('# A\n## Fix\n## Fix\n```\n## Fix\n```\n## Fix\n')]).toEqual(['a', 'fix', 'fix-1', 'fix-2']);
  });

  it('finds a broken anchor and a missing file, and passes a good link', () => {
    expect(brokenLink('README.md', 'docs/none.md')).toMatch(/no file/);
    expect(brokenLink('README.md', '#no-such-heading')).toMatch(/no heading/);
    expect(brokenLink('README.md', 'https://example.com/x#y')).toBeUndefined();
    expect(brokenLink('docs/upgrade.md', '../README.md')).toBeUndefined();
  });
});

describe('the docs link check', () => {
  it('scans the README, docs/, bench/README.md and the infra READMEs', () => {
    expect(markdownFiles).toEqual(expect.arrayContaining(['README.md', 'bench/README.md', 'docs/upgrade.md', 'infra/kubernetes/README.md']));
  });

  it.each(markdownFiles)('every relative link and anchor in %s resolves', (file) => {
    const broken = linksOf(read(file)).flatMap((target) => brokenLink(file, target) ?? []);
    expect(broken).toEqual([]);
  });

  it('every docs/*.md path (and section) named in code, config and tests exists', () => {
    const sources = [
      'serverless.yml',
      'package.json',
      ...['lib', 'functions', 'bin', 'infra', 'test', 'bench'].flatMap((dir) => walk(dir, (p) => /\.(ts|cjs|mjs|sh|ya?ml|json)$/.test(p) && !p.endsWith('docs-links.test.ts'))),
    ];
    const named = sources.flatMap((file) =>
      [...read(file).matchAll(/\bdocs\/[\w./-]*?\.md\b/g)].map((m) => ({ file, path: m[0] })),
    );
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter(({ path }) => !existsSync(join(root, path)))).toEqual([]);
    // A section named beside the path (`docs/deploy/eks.md, "Concurrency"`) is one of its headings.
    const sections = sources.flatMap((file) =>
      [...read(file).matchAll(/\b(docs\/[\w./-]*?\.md),? "([^"]+)"/g)].map((m) => ({ file, path: m[1] ?? '', section: m[2] ?? '' })),
    );
    expect(sections.filter(({ path, section }) => !existsSync(join(root, path)) || !anchorsOf(read(path)).has(slug(section)))).toEqual([]);
  });
});

describe('README.md', () => {
  const readme = read('README.md');
  const lines = readme.replace(/\n$/, '').split('\n');

  it('is at most 150 lines, none longer than 200 characters', () => {
    expect(lines.length).toBeLessThanOrEqual(150);
    expect(lines.filter((line) => [...line].length > 200)).toEqual([]);
  });

  it("opens with the quick start: its first code block is the newcomer's two commands", () => {
    const firstBlock = /```[a-z]*\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(firstBlock?.trim().split('\n')).toEqual(['npm ci && npm start', 'npm test']);
  });

  it('draws how it works in Mermaid', () => {
    expect(readme).toMatch(/```mermaid\n/);
  });
});
