import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { repoPath, repoRoot } from '../helpers/paths.js';

/** The longest line, in characters, that src/ and bench/ may hold (.prettierrc.json's printWidth). */
const MAX = 120;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : /\.tsx?$/.test(e.name) ? [p] : [];
  });
}

describe('line length', () => {
  it(`keeps every line of src/ and bench/ within ${MAX} characters`, () => {
    const files = [...sourceFiles(repoPath('src')), ...sourceFiles(repoPath('bench'))];
    assert.ok(files.length > 300);
    const long = files.flatMap((file) => readFileSync(file, 'utf8').split('\n').flatMap((line, i) =>
      [...line].length > MAX ? [`${relative(repoRoot, file)}:${i + 1} has ${[...line].length} characters`] : []));
    assert.deepEqual(long, []);
  });
});
