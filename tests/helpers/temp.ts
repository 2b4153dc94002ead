import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Directories made and not yet cleaned up: removed when the test process exits, so no run leaves any behind. */
const made = new Set<string>();
process.once('exit', () => {
  for (const path of made) rmSync(path, { recursive: true, force: true });
});

/** A fresh temporary directory, removed by the returned cleanup (or when the process exits). */
export function tempDir(prefix = 'vigil-test-'): { path: string; cleanup: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  made.add(path);
  return {
    path,
    cleanup: () => {
      rmSync(path, { recursive: true, force: true });
      made.delete(path);
    },
  };
}
