import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(start: string): string {
  let dir = start;
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('package.json not found above the test file');
    dir = up;
  }
  return dir;
}

/** The repository root (the folder holding package.json), wherever the compiled test runs from. */
export const repoRoot = findRoot(dirname(fileURLToPath(import.meta.url)));

/**
 * A path under the source tree's `tests/fixtures/` (sample data, provenance in its README.md).
 * Resolved from the repository root, not from the compiled file: the fixtures are not copied to dist/.
 */
export function fixturePath(...parts: string[]): string {
  return resolve(repoRoot, 'tests', 'fixtures', ...parts);
}

/** A path inside the repository. */
export function repoPath(...parts: string[]): string {
  return resolve(repoRoot, ...parts);
}
