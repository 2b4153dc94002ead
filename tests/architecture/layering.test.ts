import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { describe, it } from 'node:test';
import { repoPath } from '../helpers/paths.js';

/**
 * The floors of src/, from the ground up (docs/architecture.md): a file imports only from its own
 * folder or from a folder below it, so no two folders can import each other.
 */
const FLOORS = [
  'kernel', 'events', 'log', 'auth', 'detection', 'normalizers', 'projections', 'commands', 'services', 'http', 'setup', 'clients',
  'cli',
] as const;

/** One import of a source file: where it points, and whether it survives compilation (a value, not a type). */
interface Import {
  readonly from: string;
  readonly to: string;
  readonly runtime: boolean;
  readonly dynamic: boolean;
  /** A relative import: a file of src/ (otherwise a package, as written). */
  readonly local: boolean;
  readonly line: number;
}

const SRC = repoPath('src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : /\.tsx?$/.test(e.name) ? [p] : [];
  });
}

const IMPORT = /^\s*(import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/;
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Every import of every file under src/, relative ones resolved to the file they name, packages as they are written. */
function imports(): Import[] {
  const out: Import[] = [];
  for (const file of sourceFiles(SRC)) {
    const from = relative(SRC, file);
    readFileSync(file, 'utf8').split('\n').forEach((text, i) => {
      const specs: Array<[string, boolean, boolean]> = [];
      const m = IMPORT.exec(text);
      if (m) specs.push([m[3]!, m[2] === undefined && !/^\s*import\s+type\b/.test(text), false]);
      // `import('x')` in a type position (`typeof import('x')`, `import('x').T`) is erased.
      for (const d of text.matchAll(DYNAMIC)) if (!/typeof import|import\(['"][^'"]+['"]\)\./.test(text)) specs.push([d[1]!, true, true]);
      for (const [spec, runtime, dynamic] of specs) {
        const to = spec.startsWith('.') ? normalize(join(dirname(from), spec)).replace(/\.js$/, '') : spec;
        out.push({ from: from.replace(/\.tsx?$/, ''), to, runtime, dynamic, local: spec.startsWith('.'), line: i + 1 });
      }
    });
  }
  return out;
}

const floorOf = (path: string): number => FLOORS.indexOf(path.split(sep)[0] as (typeof FLOORS)[number]);

describe('the layering of src/', () => {
  const all = imports();
  const local = all.filter((i) => i.local);

  it('reads the imports of every file (the check is not vacuous)', () => {
    assert.ok(sourceFiles(SRC).length > 300);
    assert.ok(local.length > 1000, `only ${local.length} relative imports found`);
  });

  it('has exactly the documented top-level folders', () => {
    const folders = readdirSync(SRC, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort();
    assert.deepEqual(folders, [...FLOORS].sort());
  });

  it('has no import against the documented direction', () => {
    const against = local.filter((i) => floorOf(i.to) > floorOf(i.from)).map((i) => `src/${i.from}.ts:${i.line} imports src/${i.to}`);
    assert.deepEqual(against, []);
  });

  it('has no cycle between folders', () => {
    const edges = new Map<string, Set<string>>();
    for (const i of local) {
      const a = i.from.split(sep)[0]!;
      const b = i.to.split(sep)[0]!;
      if (a !== b) edges.set(a, (edges.get(a) ?? new Set()).add(b));
    }
    const cycles: string[] = [];
    const visit = (node: string, path: string[]) => {
      for (const next of edges.get(node) ?? []) {
        if (path.includes(next)) cycles.push([...path.slice(path.indexOf(next)), next].join(' -> '));
        else visit(next, [...path, next]);
      }
    };
    for (const start of edges.keys()) visit(start, [start]);
    assert.deepEqual(cycles, []);
  });

  it('keeps the ground floor free of the project: src/kernel imports only packages and itself', () => {
    const out = local.filter((i) => i.from.startsWith(`kernel${sep}`) && !i.to.startsWith(`kernel${sep}`));
    assert.deepEqual(out.map((i) => `src/${i.from}.ts:${i.line} imports src/${i.to}`), []);
  });

  it('lets only the write pipeline and the wiring that builds it hold the single writer', () => {
    const allowed = (from: string) => from.startsWith(`commands${sep}`) || from.startsWith(`cli${sep}instance${sep}`)
      || from === join('services', 'metrics', 'writer-metrics');
    const out = local.filter((i) => i.to === join('commands', 'writer') && !allowed(i.from));
    assert.deepEqual(out.map((i) => `src/${i.from}.ts:${i.line} imports the writer`), []);
  });

  it('looks read models up by name only inside the fold engine and its typed accessors', () => {
    const engine = new Set([join('projections', 'runtime.ts'), join('projections', 'heap-models.ts')]);
    const byName = sourceFiles(SRC).flatMap((file) => {
      const rel = relative(SRC, file);
      if (engine.has(rel) || rel.startsWith(join('projections', 'read-side'))) return [];
      return readFileSync(file, 'utf8').split('\n').flatMap((text, i) => (/\.state(<[^>]*>)?\(/.test(text) ? [`src/${rel}:${i + 1}`] : []));
    });
    assert.deepEqual(byName, []);
  });

  it('loads no NATS module on the default single-node path (from src/cli/main.ts, values only)', () => {
    const runtimeEdges = new Map<string, Import[]>();
    for (const i of all.filter((x) => x.runtime)) runtimeEdges.set(i.from, [...(runtimeEdges.get(i.from) ?? []), i]);
    const seen = new Set<string>();
    const nats: string[] = [];
    // Static imports load with the module; a dynamic one only when its branch runs (the JetStream backend's). The
    // entry point's dynamic imports are the commands' modules, each loaded whenever its command runs: followed.
    const entry = join('cli', 'main');
    const walk = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const i of runtimeEdges.get(file) ?? []) {
        if (i.to.startsWith('@nats-io/')) nats.push(`src/${file}:${i.line}`);
        else if (i.local && (!i.dynamic || file === entry)) walk(i.to);
      }
    };
    walk(entry);
    assert.ok(seen.size > 100, `only ${seen.size} modules reached from the entry point`);
    assert.deepEqual(nats, []);
  });
});
