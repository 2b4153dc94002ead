import assert from 'node:assert/strict';
import type { Database } from 'lmdb';
import type { DomainEvent, Decision, Rejection, RejectionKind } from '../../src/commands/decision.js';
import { decodeRecord, encodeRecord } from '../../src/log/record.js';
import { type Actor, type LogRecord } from '../../src/kernel/record.js';
import { HEAP_PROJECTIONS, INDEX_PROJECTIONS } from '../../src/projections/all.js';
import { writeModelsOf, type WriteModels } from '../../src/projections/models.js';
import type { FoldedModels } from '../../src/projections/runtime.js';
import type { IndexKey, IndexProjection, IndexReader, IndexWriter, Projection } from '../../src/projections/types.js';
import { AUTHORITY_PROJECTIONS, authorityModelsOf, type AuthorityModels } from '../../src/setup/models.js';
import { schemaIssues } from './stored-events.js';

/** The read models of one service: what a spec folds its given events into. */
export interface ModelSet {
  readonly projections: readonly Projection<unknown>[];
  readonly indexes: readonly IndexProjection[];
}

/** The instance's read models. */
export const INSTANCE: ModelSet = { projections: HEAP_PROJECTIONS, indexes: INDEX_PROJECTIONS };
/** The setup authority's read models. */
export const AUTHORITY: ModelSet = { projections: AUTHORITY_PROJECTIONS, indexes: [] };

/** The record time of given events that do not name one. */
export const GIVEN_AT = '2026-11-22T10:00:00.000Z';

/** A prior event: a domain event, optionally with its record's time and actor. */
export type Given = DomainEvent & { readonly at?: string; readonly actor?: Actor };

/**
 * Read models folded in memory, through the same typed accessors the service's decisions get (the
 * instance's or the authority's: a spec reads only its own service's), plus a way to fold more
 * records into them.
 */
export interface MemoryModels extends WriteModels, AuthorityModels {
  /** Appends events as records (through the record codec, as the log would) and folds them. */
  append(events: readonly Given[]): void;
}

/**
 * Read models with no store: heap projections folded with their own `evolve`, index projections
 * applied into a Map behind the same `index.get`, and `record(seq)` from the appended records.
 * Every record goes through the log's codec first, so projections see what a replay would decode.
 */
export function memoryModels(set: ModelSet = INSTANCE): MemoryModels {
  const states = new Map<string, unknown>(set.projections.map((p) => [p.name, p.initial()]));
  const index = new Map<string, unknown>();
  const records: LogRecord[] = [];
  const keyOf = (db: string, key: IndexKey) => `${db}\u0000${JSON.stringify(key)}`;
  const reader: IndexReader = { get: (db, key) => index.get(keyOf(db, key)) };
  const writer: IndexWriter = {
    put: (db, key, value) => { index.set(keyOf(db, key), value); },
    remove: (db, key) => { index.delete(keyOf(db, key)); },
  };
  const folded: FoldedModels = {
    state<S>(name: string): S {
      if (!states.has(name)) throw new Error(`no projection named ${name}`);
      return states.get(name) as S;
    },
    index: reader,
    db<V>(name: string): Database<V, IndexKey> {
      throw new Error(`decider specs hold no LMDB database (${name}): deciders read indexes through index.get`);
    },
    seq: () => records.length,
    record: (seq) => records[seq - 1],
  };
  const typed = set === AUTHORITY ? authorityModelsOf(folded) : writeModelsOf(folded);
  return Object.assign(typed, {
    append(events: readonly Given[]) {
      for (const e of events) {
        const stored: LogRecord = { seq: records.length + 1, at: e.at ?? GIVEN_AT, type: e.type, ...(e.actor ? { actor: e.actor } : {}), data: e.data, prev: '' };
        const record = decodeRecord(encodeRecord(stored));
        records.push(record);
        for (const p of set.projections) states.set(p.name, p.evolve(states.get(p.name), record));
        for (const ix of set.indexes) ix.apply(record, reader, writer);
      }
    },
  }) as unknown as MemoryModels;
}

/** What an accepted decision left: its events, its result, and the read models with the events folded in. */
export interface Accepted<R> {
  readonly events: readonly DomainEvent[];
  readonly result: R;
  readonly models: MemoryModels;
}

/** The expectations of one spec, after its command. */
export interface Then<R> {
  /** Accepted with exactly `events` (and, when given, exactly `result`). */
  then(events: readonly DomainEvent[], result?: R): Accepted<R>;
  /** Accepted; `check` asserts on the events and the result (for events with derived content). */
  thenAccepts(check: (events: readonly DomainEvent[], result: R) => void): Accepted<R>;
  /**
   * Rejected with `kind` and a message matching `message`. The events a rejection records must be
   * stated: exactly `recorded`, or checked by it; none when it is left out.
   */
  thenRejects(kind: RejectionKind, message?: RegExp, recorded?: readonly DomainEvent[] | ((events: readonly DomainEvent[]) => void)): Rejection;
}

/** Every event a decider emits must have its type's stored shape. */
function assertStoredShape(events: readonly DomainEvent[]): void {
  assert.deepEqual(schemaIssues(events), [], 'the decided events have the stored shape of their types');
}

function thenOf<R>(decision: Decision<R>, models: MemoryModels): Then<R> {
  const accepted = (): Accepted<R> => {
    if (!decision.ok) assert.fail(`expected the command to be accepted, it was rejected: ${decision.rejection.kind}: ${decision.rejection.message}`);
    assertStoredShape(decision.events);
    // The fold must take what the decider wrote.
    models.append(decision.events);
    return { events: decision.events, result: decision.result, models };
  };
  return {
    then(events, result) {
      const a = accepted();
      assert.deepEqual(a.events, events);
      if (result !== undefined) assert.deepEqual(a.result, result);
      return a;
    },
    thenAccepts(check) {
      const a = accepted();
      check(a.events, a.result);
      return a;
    },
    thenRejects(kind, message, recorded) {
      if (decision.ok) assert.fail(`expected a ${kind} rejection, the command was accepted with ${decision.events.length} event(s)`);
      assert.equal(decision.rejection.kind, kind, decision.rejection.message);
      if (message) assert.match(decision.rejection.message, message);
      const events = decision.events ?? [];
      assertStoredShape(events);
      if (typeof recorded === 'function') recorded(events);
      else assert.deepEqual(events, recorded ?? [], 'the events the rejection records');
      models.append(events);
      return decision.rejection;
    },
  };
}

/**
 * A decider specification: `spec(decide).given(prior events).when(command).then(events)` or
 * `.thenRejects(kind, /message/)`. The given events are folded through the service's real
 * projections into in-memory read models; no store is opened.
 */
export function spec<C, R>(decide: (models: MemoryModels, command: C) => Decision<R>, set: ModelSet = INSTANCE) {
  return {
    given(events: readonly Given[] = []) {
      return {
        when(command: C): Then<R> {
          const models = memoryModels(set);
          models.append(events);
          return thenOf(decide(models, command), models);
        },
      };
    },
  };
}
