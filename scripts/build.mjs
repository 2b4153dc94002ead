#!/usr/bin/env node
// Compiles src/, tests/ and bench/ into dist/ with the TypeScript compiler (tsconfig.json).
//
//   node scripts/build.mjs               a clean build: dist/ removed first (`npm run build`, `npm test`, CI, install)
//   node scripts/build.mjs --if-changed  what `npm start` runs: nothing when no input changed since the last build,
//                                        else an incremental build (only what changed is checked and emitted)
//
// Both leave dist/.tsbuildinfo, the compiler's incremental state (tsconfig.json), and dist/.built, whose modification
// time is set to the moment the build started: an input saved at or after that moment is newer, so the next
// --if-changed build sees it. (The compiler's own file is no such mark: a `tsc --noEmit` rewrites it without emitting.) A deleted
// source leaves no output behind: after an incremental build, every dist/ file whose .ts/.tsx source is gone is
// removed (a stale dist/tests/**/*.test.js would otherwise still run under `node --test`).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const stamp = join(dist, '.built');
/** The folders tsconfig.json compiles; their outputs land under dist/ at the same relative paths. */
const SOURCE_DIRS = ['src', 'tests', 'bench'];
/** Files outside those folders whose change can change the output: the compiler options, the installed packages. */
const OTHER_INPUTS = ['tsconfig.json', 'package.json', 'node_modules/.package-lock.json'];
const isSource = (name) => /\.tsx?$/.test(name);

const say = (line) => process.stderr.write(`build: ${line}\n`);

/** The newest modification time among the sources and the folders holding them (a deletion or rename changes its folder). */
function newestInput() {
  let newest = 0;
  const visit = (dir) => {
    newest = Math.max(newest, statSync(dir).mtimeMs);
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (isSource(entry.name)) newest = Math.max(newest, statSync(path).mtimeMs);
    }
  };
  for (const d of SOURCE_DIRS) if (existsSync(join(root, d))) visit(join(root, d));
  for (const f of OTHER_INPUTS) if (existsSync(join(root, f))) newest = Math.max(newest, statSync(join(root, f)).mtimeMs);
  return newest;
}

/** Removes every compiled file under dist/ whose source no longer exists; returns their paths. */
function removeOrphans() {
  const removed = [];
  const visit = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (entry.name.endsWith('.js')) {
        const source = join(root, relative(dist, path)).slice(0, -'.js'.length);
        if (!existsSync(`${source}.ts`) && !existsSync(`${source}.tsx`)) {
          rmSync(path);
          removed.push(relative(root, path));
        }
      }
    }
  };
  for (const d of SOURCE_DIRS) if (existsSync(join(dist, d))) visit(join(dist, d));
  return removed;
}

function compile() {
  const started = new Date();
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  if (!existsSync(tsc)) {
    say('the TypeScript compiler is not installed: run npm install first');
    process.exit(1);
  }
  const r = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.json')], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
  writeFileSync(stamp, '');
  utimesSync(stamp, started, started);
}

const ifChanged = process.argv.includes('--if-changed');
const built = existsSync(stamp) && existsSync(join(dist, 'src', 'cli', 'main.js'));
if (!ifChanged || !built) {
  if (ifChanged) say('no previous build in dist/: building everything (about 10 s on an idle machine)');
  rmSync(dist, { recursive: true, force: true });
  compile();
} else if (newestInput() < statSync(stamp).mtimeMs) {
  say('dist/ is up to date');
} else {
  const t0 = Date.now();
  say('sources changed since the last build: compiling what changed');
  compile();
  const removed = removeOrphans();
  if (removed.length > 0) say(`removed ${removed.length} output(s) of deleted sources: ${removed.join(', ')}`);
  say(`done in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}
