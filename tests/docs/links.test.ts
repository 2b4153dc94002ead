import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { ROLES, ROLE_PERMISSIONS } from '../../src/auth/roles.js';
import { repoPath } from '../helpers/paths.js';

/** README.md and every .md under docs/, as repository-relative paths. */
function markdownFiles(): string[] {
  const out = ['README.md'];
  const visit = (rel: string): void => {
    for (const name of readdirSync(repoPath(rel)).sort()) {
      const child = `${rel}/${name}`;
      if (statSync(repoPath(child)).isDirectory()) visit(child);
      else if (name.endsWith('.md')) out.push(child);
    }
  };
  visit('docs');
  return out;
}

/** Folders a command writes (ignored by git), which docs name before they exist. */
const GENERATED = ['bench/results/', 'bench/results'];

/** The text outside fenced code blocks (a sample command may name files of the reader's machine). */
const prose = (text: string) => text.replace(/^```[\s\S]*?^```/gm, (block) => block.replace(/[^\n]/g, ' '));

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[`*_]/g, '').replace(/[^\p{L}\p{N} -]/gu, '').replace(/ /g, '-');
}

function anchorsOf(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of prose(readFileSync(repoPath(file), 'utf8')).matchAll(/^#{1,6} +(.+)$/gm)) {
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Every problem with the links and file references of one markdown file. */
function problems(file: string): string[] {
  const text = prose(readFileSync(repoPath(file), 'utf8'));
  const dir = posix.dirname(file);
  const out: string[] = [];
  for (const m of text.matchAll(/\[([^\]]*)\]\(([^)\s]+)\)/g)) {
    const target = m[2]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const [path, anchor] = target.split('#') as [string, string | undefined];
    const resolved = path === '' ? file : posix.normalize(posix.join(dir, path));
    if (resolved.startsWith('..') || !existsSync(repoPath(resolved))) { out.push(`${file}: link ${target}: ${resolved} does not exist`); continue; }
    if (anchor !== undefined && resolved.endsWith('.md') && !anchorsOf(resolved).has(anchor)) out.push(`${file}: link ${target}: no heading #${anchor} in ${resolved}`);
  }
  // Paths named in prose or code spans: src/…, tests/…, docs/…, rules/…, bench/….
  for (const m of text.matchAll(/(?<![\w./-])((?:\.\.\/)*(?:src|tests|docs|rules|bench)\/[\w./-]*[\w/])/g)) {
    const ref = m[1]!;
    if (/[*<{]/.test(ref) || GENERATED.includes(ref)) continue;
    const fromRoot = ref.replace(/^(\.\.\/)+/, '');
    if (ref.startsWith('../') && posix.normalize(posix.join(dir, ref)).startsWith('..')) { out.push(`${file}: ${ref} points outside the repository`); continue; }
    if (!existsSync(repoPath(fromRoot)) && !existsSync(repoPath(dir, ref))) out.push(`${file}: ${ref} does not exist`);
  }
  // A bare file name such as FORMATS.md must be a file of the repository (link texts are checked as links).
  for (const m of text.replace(/\[[^\]]*\]\([^)\s]+\)/g, '').matchAll(/(?<![\w./-])([A-Za-z][\w-]*\.md)\b/g)) {
    const name = m[1]!;
    if (![join(dirname(repoPath(file)), name), repoPath(name), repoPath('docs', name)].some((p) => existsSync(p))) out.push(`${file}: ${name} does not exist`);
  }
  // "spec 2.1" means docs/interface.md, section 2.1: it must be a link there.
  const linked = new Set([...text.matchAll(/\[spec ([\d.]+)\]\(([^)\s]+)\)/g)].map((l) => l.index));
  for (const m of text.matchAll(/\bspec (\d+(?:\.\d+)?)\b/g)) {
    if (!linked.has(m.index - 1)) out.push(`${file}: "spec ${m[1]}" is not a link to docs/interface.md`);
  }
  if (/\.\.\/shared\b|\bshared\/(samples|spec)\b/.test(text)) out.push(`${file}: names a folder outside the repository`);
  return out;
}

describe('docs links', () => {
  it('checks what it should: a dead link, a dead anchor, a missing file name and a bare spec reference are found', () => {
    assert.equal(slug('2.1 NormalizedEvent (schemaVersion 1)'), '21-normalizedevent-schemaversion-1');
    assert.equal(slug('Modifiers (a lookup table in `modifiers.ts`)'), 'modifiers-a-lookup-table-in-modifiersts');
    const files = markdownFiles();
    assert.ok(files.includes('README.md') && files.includes('docs/normalizers/network-monitor.md'), files.join(', '));
  });

  it('every link, anchor and file reference in README.md and docs/ resolves in the repository', () => {
    const found = markdownFiles().flatMap(problems);
    assert.deepEqual(found, []);
  });

  it('explains every role in docs/interface.md, naming every permission the code grants it', () => {
    const text = readFileSync(repoPath('docs/interface.md'), 'utf8');
    for (const role of ROLES) {
      const row = text.split('\n').find((line) => line.startsWith(`| \`${role}\` |`));
      assert.ok(row, `role ${role} has a row in the roles table of docs/interface.md`);
      if (role === 'admin') { assert.match(row, /every permission/); continue; }
      // A row may build on the viewer's ("everything a viewer may, plus ...").
      const inherited: readonly string[] = row.includes('everything a viewer may') ? ROLE_PERMISSIONS.viewer : [];
      const missing = ROLE_PERMISSIONS[role].filter((p) => p !== 'principal:read' && !inherited.includes(p) && !row.includes(`\`${p}\``));
      assert.deepEqual(missing, [], `the ${role} row of docs/interface.md names these permissions`);
    }
  });
});
