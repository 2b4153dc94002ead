import type { Fact, SubmittedEvent } from '../../events/collector-protocol/envelope.js';
import type { SourceCursors } from './spool.js';

/** Where a source stands once one event is spooled. */
export type Mark =
  { readonly journal: string } | { readonly file: string; readonly ino: number; readonly next: number };

/** One pending event with the source position just after it. */
interface Item {
  readonly event: SubmittedEvent;
  readonly mark: Mark;
  readonly size: number;
}

/** A batch cut from the pending events: its events and facts, and the cursors reached after them. */
export interface Cut {
  readonly events: SubmittedEvent[];
  readonly facts: Fact[];
  readonly cursors: SourceCursors;
}

/**
 * Events waiting to be spooled. Each carries its source position, so a batch cut from the front
 * records exactly the cursors after its last event: after a crash the sources resume there, with
 * no gap (later events were not spooled) and no duplicate (earlier ones were).
 */
export class PendingBatch {
  private items: Item[] = [];
  private bytes = 0;
  private facts: Fact[] = [];
  private since: number | undefined;
  private journal: string | undefined;
  private files: Record<string, { ino: number; offset: number }>;

  constructor(
    cursors: SourceCursors,
    private readonly limits: { maxEvents: number; maxBytes: number; maxWaitMs: number },
  ) {
    this.journal = cursors.journal;
    this.files = { ...(cursors.files ?? {}) };
  }

  /** Adds an event read at `nowMs`. */
  add(event: SubmittedEvent, mark: Mark, nowMs: number): void {
    const size = JSON.stringify(event).length;
    this.items.push({ event, mark, size });
    this.bytes += size;
    this.since ??= nowMs;
  }

  /** Replaces the facts to send with the next batch. */
  setFacts(facts: Fact[]): void {
    this.facts = facts;
    this.since ??= 0;
  }

  /** Events waiting. */
  get size(): number {
    return this.items.length;
  }

  /** Whether a batch should be cut: full by count or bytes, or the oldest waited maxWaitMs. */
  due(nowMs: number): boolean {
    if (this.items.length === 0 && this.facts.length === 0) return false;
    return (
      this.items.length >= this.limits.maxEvents ||
      this.bytes >= this.limits.maxBytes ||
      nowMs - (this.since ?? nowMs) >= this.limits.maxWaitMs
    );
  }

  /** Cuts the next batch from the front (at most maxEvents events and about maxBytes). */
  cut(nowMs: number): Cut {
    let n = 0;
    let bytes = 0;
    while (
      n < this.items.length &&
      n < this.limits.maxEvents &&
      (n === 0 || bytes + this.items[n]!.size <= this.limits.maxBytes)
    )
      bytes += this.items[n++]!.size;
    const taken = this.items.splice(0, n);
    this.bytes -= bytes;
    for (const { mark } of taken) {
      if ('journal' in mark) this.journal = mark.journal;
      else this.files[mark.file] = { ino: mark.ino, offset: mark.next };
    }
    const facts = this.facts;
    this.facts = [];
    this.since = this.items.length > 0 ? nowMs : undefined;
    return {
      events: taken.map((t) => t.event),
      facts,
      cursors: { ...(this.journal ? { journal: this.journal } : {}), files: { ...this.files } },
    };
  }
}
