import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { parse } from 'yaml';
import { fixturePath, repoPath } from '../helpers/paths.js';

/**
 * Issue 19: the suite must pass on a fresh clone with nothing beside it. Sample data lives in
 * tests/fixtures/ (provenance in its README.md), never in a folder beside the repository.
 */

/** The sibling folder's name, assembled so that this file names no path outside the repository. */
const S = ['sh', 'ared'].join('');
const Q = '[\'"`]';

/** Ways of reaching a folder beside the repository; a line matching any of them is a finding. */
const OUTSIDE_TREE: readonly RegExp[] = [
  new RegExp(`\\.\\.[\\\\/]+${S}\\b`),                      // a relative path to the sibling folder, / or \\ separated
  new RegExp(`${Q}\\.\\.${Q}\\s*,\\s*${Q}${S}${Q}`),          // a join of '..' and the sibling's name
  new RegExp(`${Q}${S}${Q}\\s*,\\s*${Q}samples${Q}`),            // a join of the sibling's name and its samples
  new RegExp(`\\b${S}Path\\b`),                                 // the helper this replaced
];

function findings(text: string): string[] {
  return text.split('\n').flatMap((line, i) => (OUTSIDE_TREE.some((re) => re.test(line)) ? [`${i + 1}: ${line.trim()}`] : []));
}

/** Files under `dir` as repository-relative paths with `/` separators. */
function walk(dir: string, skip: (rel: string) => boolean): string[] {
  const out: string[] = [];
  const visit = (rel: string): void => {
    for (const name of readdirSync(repoPath(rel)).sort()) {
      const child = `${rel}/${name}`;
      if (skip(child)) continue;
      if (statSync(repoPath(child)).isDirectory()) visit(child);
      else out.push(child);
    }
  };
  if (existsSync(repoPath(dir))) visit(dir);
  return out;
}

const skipped = (rel: string): boolean => rel === 'tests/fixtures' || rel === 'bench/results';

describe('the repository is self-contained', () => {
  it('the check flags the ways of reaching the sibling folder, and not the word in prose or code', () => {
    for (const bad of [
      `const sources = [join(root, '..', '${S}', 'samples', 'sigma', 'rules')];`,
      `readFileSync('../${S}/samples/sigma/rules/x.yml')`,
      `const dir = \`\${root}/../${S}/samples\`;`,
      `return resolve(repoRoot, '..', '${S}', ...parts);`,
      `join(base, "${S}", "samples")`,
      `import { ${S}Path } from '../helpers/paths.js';`,
    ]) assert.equal(findings(bad).length, 1, bad);
    for (const fine of [
      "title: `Related alerts on ${shared ?? 'shared systems'}`",
      '/** Metadata shared by detection and correlation rules */',
      'const shared = alert.affectedSystems.find((s) => s);',
      "fixturePath('sigma', 'rules')",
    ]) assert.deepEqual(findings(fine), [], fine);
  });

  it('no source, test, bench or CI file reaches a folder beside the repository', () => {
    const files = ['src', 'tests', 'bench', '.ci'].flatMap((d) => walk(d, skipped));
    for (const expected of ['tests/helpers/paths.ts', 'bench/detection.ts', '.ci/run']) assert.ok(files.includes(expected), `walked ${expected}`);
    assert.ok(!files.some((f) => f.startsWith('tests/fixtures/')), 'fixtures are data, not checked');
    const found = files.flatMap((f) => findings(readFileSync(repoPath(f), 'utf8')).map((hit) => `${f}:${hit}`));
    assert.deepEqual(found, [], 'use fixturePath(...) and tests/fixtures/ instead');
  });

  it('no package.json script reaches a folder beside the repository', () => {
    const pkg = JSON.parse(readFileSync(repoPath('package.json'), 'utf8')) as { scripts?: Record<string, string> };
    assert.ok(pkg.scripts?.['test'], 'package.json has a test script');
    const found = Object.entries(pkg.scripts ?? {}).flatMap(([name, script]) => findings(script).map((hit) => `scripts.${name} ${hit}`));
    assert.deepEqual(found, []);
  });
});

describe('tests/fixtures/README.md', () => {
  const readme = readFileSync(fixturePath('README.md'), 'utf8');
  const linked = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t) && !t.startsWith('#'));
  const files = walk('tests/fixtures', () => false).map((f) => f.slice('tests/fixtures/'.length)).filter((f) => f !== 'README.md');

  // A link ending in `/` lists a whole directory (thousands of verbatim files from one source).
  const directories = linked.filter((t) => t.endsWith('/'));

  it('links only files (or directories, ending in /) that exist under tests/fixtures', () => {
    assert.ok(linked.length > 0);
    for (const target of linked) {
      assert.ok(!target.split('/').includes('..'), `${target} stays inside tests/fixtures`);
      const isDirectory = target.endsWith('/');
      assert.ok(existsSync(fixturePath(target)) && statSync(fixturePath(target)).isDirectory() === isDirectory, `${target} exists`);
    }
  });

  it('links every fixture file, or a directory holding it, so each one has its provenance', () => {
    assert.ok(files.length > 0);
    const missing = files.filter((f) => !linked.includes(f) && !directories.some((d) => f.startsWith(d)));
    assert.deepEqual(missing, [], 'add these files to tests/fixtures/README.md with source, licence and verbatim/abridged/constructed');
  });

  it('credits the author and id of every SigmaHQ rule on its row (DRL 1.1)', () => {
    assert.match(readme, /Detection Rule License \(DRL\) 1\.1/);
    assert.ok(readme.includes('https://github.com/SigmaHQ/Detection-Rule-License'));
    const rules = files.filter((f) => f.startsWith('sigma/rules/'));
    assert.ok(rules.length > 0);
    for (const rule of rules) {
      const { author, id } = parse(readFileSync(fixturePath(rule), 'utf8')) as { author?: unknown; id?: unknown };
      assert.ok(typeof author === 'string' && typeof id === 'string', `${rule} has an author and an id`);
      const row = readme.split('\n').find((line) => line.includes(`](${rule})`));
      assert.ok(row?.includes(author) && row.includes(id), `${rule}: README row names "${author}" and ${id}`);
    }
  });
});

describe('the test command', () => {
  it('finds every test file: npm test names dist/tests/*/*.test.js, so each test sits one folder deep', () => {
    const script = (JSON.parse(readFileSync(repoPath('package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.test!;
    assert.match(script, /dist\/tests\/\*\/\*\.test\.js/);
    const tests = walk('tests', (rel) => rel === 'tests/fixtures').filter((f) => f.endsWith('.test.ts'));
    assert.ok(tests.length > 40);
    assert.deepEqual(tests.filter((f) => f.split('/').length !== 3), [], 'move these to tests/<area>/<unit>.test.ts or widen the test command');
  });
});
