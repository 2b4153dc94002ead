import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CARRYING_EVENT_TYPES, eventsCarried } from '../../src/events/record-types.js';
import { AUTHORITY_EVENTS, INSTANCE_EVENTS, type StoredInstanceEvent } from '../../src/events/union.js';
import type { LogRecord } from '../../src/kernel/record.js';
import { HEAP_PROJECTIONS, INDEX_PROJECTIONS, readProjections } from '../../src/projections/all.js';
import { INSTANCE_EVENT_TYPES, type IndexProjection, type IndexWriter, type Projection } from '../../src/projections/types.js';
import { AUTHORITY_PROJECTIONS } from '../../src/setup/models.js';

/**
 * Instance event types no projection folds (the stats count aside), each with why: a new event
 * type is folded by a projection or listed here, never forgotten.
 */
const INSTANCE_TYPES_FOLDED_BY_NONE: readonly string[] = [
  // A retention cut's wrapper: a fold from the cut is given the records it carries (src/log/retention/carried.ts), never the wrapper.
  'RecordsCarriedForward',
  // What the signer and the operator did to the log itself (docs/log.md, "Signed heads"): read from the log by auditors
  // (`vigil log export`), counted by stats; no query answers them apart.
  'SignedHeadsRewound',
  'LogTailQuarantined',
  // A hunt's audit record (docs/hunting.md): its proof reads it from the log by its seq; the request's own audit
  // record, folded by the audit trail, says what it asked.
  'HuntSearched',
];

/** Setup authority event types no projection folds, each with why. */
const AUTHORITY_TYPES_FOLDED_BY_NONE: readonly string[] = [
  // Kept for the audit trail: a refused enrollment changes no grant, so the deployments model has nothing to fold.
  'CollectorEnrollmentRefused',
];

/** Projections that fold every record whatever it says: they show nothing of whether a type is read, so coverage leaves them out. */
const COUNTS_EVERY_RECORD = new Set(['stats']);

type AnyProjection = Projection<unknown> | IndexProjection;

const read = readProjections();
/** Every projection of the instance: the writer's heap models and indexes, and the read side's. */
const INSTANCE_PROJECTIONS: readonly AnyProjection[] = [...HEAP_PROJECTIONS, ...INDEX_PROJECTIONS, ...read.heap, ...read.indexes];

const INSTANCE_TYPES: readonly string[] = Object.keys(INSTANCE_EVENTS);
const AUTHORITY_TYPES: readonly string[] = Object.keys(AUTHORITY_EVENTS);

const isIndex = (p: AnyProjection): p is IndexProjection => 'apply' in p;
const foldsOf = (p: AnyProjection): ReadonlySet<string> => {
  assert.ok(p.folds, `${p.name} declares the types it folds`);
  return p.folds;
};

const record = (type: string, data: unknown = {}): LogRecord => ({ seq: 1, at: '2026-11-22T10:00:00.000Z', type, data, prev: '' });

/** The types of `types` no projection of `projections` folds. */
function foldedByNone(projections: readonly AnyProjection[], types: readonly string[]): string[] {
  const folded = new Set(projections.flatMap((p) => [...foldsOf(p)]));
  return types.filter((t) => !folded.has(t)).sort();
}

describe('what each projection folds', () => {
  it('names only event types of its service', () => {
    for (const [projections, types, service] of [[INSTANCE_PROJECTIONS, INSTANCE_TYPES, 'instance'], [AUTHORITY_PROJECTIONS, AUTHORITY_TYPES, 'setup authority']] as const) {
      const known = new Set(types);
      assert.equal(new Set(projections.map((p) => p.name)).size, projections.length, `${service} projection names are unique`);
      for (const p of projections) {
        const folds = foldsOf(p);
        assert.ok(folds.size > 0, `${p.name} folds something`);
        for (const t of folds) assert.ok(known.has(t), `${p.name} folds ${t}, not an event type of the ${service}`);
      }
    }
  });

  it('includes the legacy records read as a type it folds', () => {
    for (const p of INSTANCE_PROJECTIONS) {
      if (foldsOf(p).has('DetectionHitsRecorded')) assert.ok(foldsOf(p).has('DetectionHits'), `${p.name} is given legacy DetectionHits records, upcast`);
    }
  });

  it('covers every instance event type, or the type is listed with why no projection folds it', () => {
    for (const name of COUNTS_EVERY_RECORD) {
      const p = INSTANCE_PROJECTIONS.find((x) => x.name === name);
      assert.ok(p, `${name} is an instance projection`);
      assert.deepEqual([...foldsOf(p)].sort(), [...INSTANCE_TYPES].sort(), `${name} counts every record`);
    }
    const readers = INSTANCE_PROJECTIONS.filter((p) => !COUNTS_EVERY_RECORD.has(p.name));
    assert.deepEqual(foldedByNone(readers, INSTANCE_TYPES), [...INSTANCE_TYPES_FOLDED_BY_NONE].sort());
  });

  it('covers every setup authority event type, or the type is listed with why no projection folds it', () => {
    assert.deepEqual(foldedByNone(AUTHORITY_PROJECTIONS, AUTHORITY_TYPES), [...AUTHORITY_TYPES_FOLDED_BY_NONE].sort());
  });

  it('counts as evidence exactly the types whose records carry events', () => {
    // Every record type says whether it carries events without reading data it does not carry.
    const marker = {};
    const carrying = INSTANCE_EVENT_TYPES.filter((type) => eventsCarried({ type, data: { events: [marker], event: marker } } as unknown as StoredInstanceEvent).length > 0);
    assert.deepEqual([...carrying].sort(), [...CARRYING_EVENT_TYPES].sort());
  });
});

describe('a record of a type a projection does not fold', () => {
  /** Each heap projection of a service with the types of that service it does not fold. */
  const heap = [...[...HEAP_PROJECTIONS, ...read.heap].map((p) => [p, INSTANCE_TYPES] as const), ...AUTHORITY_PROJECTIONS.map((p) => [p, AUTHORITY_TYPES] as const)];

  it('leaves a heap model as it was: the very same state, deep-equal to before', () => {
    for (const [p, types] of heap) {
      const folds = foldsOf(p);
      // A model with derived parts that do not clone (the intel model's index is functions over its maps) is compared
      // by its snapshot, which is all of it that is not derived.
      const plain = (x: unknown) => structuredClone(p.snapshot ? p.snapshot(x) : x);
      for (const type of types.filter((t) => !folds.has(t))) {
        const s = p.initial();
        const before = plain(s);
        assert.equal(p.evolve(s, record(type)), s, `${p.name} returns its state for ${type}`);
        assert.deepEqual(plain(s), before, `${p.name} is unchanged by ${type}`);
      }
    }
  });

  it('makes an index write and read nothing', () => {
    for (const p of [...INDEX_PROJECTIONS, ...read.indexes]) {
      const folds = foldsOf(p);
      const calls: string[] = [];
      const write: IndexWriter = { put: (db) => { calls.push(`put ${db}`); }, remove: (db) => { calls.push(`remove ${db}`); } };
      const reader = { get: (db: string) => { calls.push(`get ${db}`); return undefined; } };
      for (const type of INSTANCE_TYPES.filter((t) => !folds.has(t))) p.apply(record(type), reader, write);
      assert.deepEqual(calls, [], `${p.name} writes nothing for the types it does not fold`);
    }
  });
});
