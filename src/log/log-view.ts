import type { LogCut, LogHead } from './event-log.js';
import type { MerkleTree } from './merkle-tree.js';
import type { LogRecord } from '../kernel/record.js';

/**
 * What the verifications read of an LMDB log: its records, head, cut and tree. The opened log
 * (`LmdbEventLog`) is one; a read-only snapshot of a store that another process serves
 * (src/log/store-snapshot.ts) is another, bounded at the head it read when it was opened.
 */
export interface LogView {
  head(): LogHead;
  /** The first stored seq: 1, or the first record after the last cut. */
  first(): number;
  cut(): LogCut | undefined;
  /** The signed head of the last commit (docs/log.md, "Signed heads"), when one was signed. */
  signedHead(): string | undefined;
  read(from: number, to?: number): Iterable<LogRecord>;
  readRaw(from: number, to?: number): Iterable<{ seq: number; bytes: Uint8Array }>;
  readonly tree: Pick<MerkleTree, 'size' | 'root' | 'frontierAt'>;
}
