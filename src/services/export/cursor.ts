import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeDurable } from '../../kernel/secret-files.js';
import { decideExportCursor } from '../../commands/export-state.js';
import type { Pipeline } from '../../commands/pipeline.js';
import type { WriteModels } from '../../projections/models.js';
import type { ExportsState } from '../../projections/exports.js';

/** A destination's durable cursor: every item of the records up to `seq` has been delivered. */
export interface CursorStore {
  load(): number;
  /**
   * Keeps `seq`; `afterDelivery` says a batch was just taken (otherwise the cursor only passes
   * records that carry nothing for the destination). The runner waits for a returned promise.
   */
  save(seq: number, afterDelivery: boolean): void | Promise<void>;
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
      if (typeof parsed.seq !== 'number' || !Number.isSafeInteger(parsed.seq) || parsed.seq < 0)
        throw new Error(`${path}: not an export cursor`);
      return parsed.seq;
    },
    save(seq) {
      if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
      writeDurable(path, `${JSON.stringify({ seq })}\n`);
    },
  };
}

/**
 * The cursor of destination `name` kept in the log itself (`ExportCursorRecorded`), for a node of
 * a JetStream cluster: whichever node leads next resumes where the last delivered batch ended.
 * Only a delivery is recorded (passing records that carry nothing would append a record per
 * record); a failed record is logged, and at worst the next leader delivers that batch again.
 */
export function logCursor(
  pipeline: Pipeline<WriteModels>,
  name: string,
  now: () => number,
  logLine: (line: Record<string, unknown>) => void,
): CursorStore {
  return {
    load: () => pipeline.models.exports.cursors.get(name) ?? 0,
    async save(seq, afterDelivery) {
      if (!afterDelivery) return;
      const ctx = { now: new Date(now()).toISOString(), actor: { id: 'vigil', authentication: 'service' } };
      await pipeline
        .dispatch({ decide: (m) => decideExportCursor(m.exports, name, seq), ctx: ctx })
        .catch((err: unknown) =>
          logLine({
            level: 'warn',
            msg: `export destination ${name}: its cursor was not recorded`,
            seq,
            error: (err as Error).message,
          }),
        );
    },
  };
}
