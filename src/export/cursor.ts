import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeDurable } from '../auth/secret-files.js';

/** A destination's durable cursor: every item of the records up to `seq` has been delivered. */
export interface CursorStore {
  load(): number;
  save(seq: number): void;
}

/**
 * The cursor of destination `name`, one small file under `<storage.path>/export/`, written
 * atomically and fsynced before it is trusted, so a restart or a kill -9 resumes where delivery
 * stopped (and never skips: at worst it delivers the last batch again).
 */
export function fileCursor(storePath: string, name: string): CursorStore {
  const dir = join(storePath, 'export');
  const path = join(dir, `${name}.cursor.json`);
  return {
    load() {
      if (!existsSync(path)) return 0;
      const parsed = JSON.parse(readFileSync(path, 'utf8')) as { seq?: unknown };
      if (typeof parsed.seq !== 'number' || !Number.isSafeInteger(parsed.seq) || parsed.seq < 0) throw new Error(`${path}: not an export cursor`);
      return parsed.seq;
    },
    save(seq) {
      if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
      writeDurable(path, `${JSON.stringify({ seq })}\n`);
    },
  };
}
