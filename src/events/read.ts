import type { LogRecord } from '../kernel/record.js';
import { LEGACY_READ_AS, hitsRecordedFromLegacy } from './upcast.js';
import {
  AUTHORITY_EVENTS,
  INSTANCE_EVENTS,
  type AuthorityRecord,
  type InstanceRecord,
  type StoredInstanceEvent,
  type StoredInstanceRecord,
} from './union.js';

const INSTANCE_TYPES: ReadonlySet<string> = new Set(Object.keys(INSTANCE_EVENTS));
const AUTHORITY_TYPES: ReadonlySet<string> = new Set(Object.keys(AUTHORITY_EVENTS));

type Envelope = { readonly type: string; readonly data: unknown };

/**
 * The one unchecked step from decoded bytes to the typed union, taken only once the type name is
 * recognised: the log holds only what deciders wrote through these very types (the schemas are
 * checked against whole logs by tests, never on the replay path, which they would slow down).
 */
function known<T extends Envelope>(x: Envelope): T {
  return x as T;
}

/** The last legacy record read and what it reads as: every projection folds the same record in turn. */
let lastUpcast: { readonly from: LogRecord; readonly to: InstanceRecord } | undefined;

/**
 * A decoded instance log record as projections see it: narrowed by its type name (a set lookup),
 * a legacy type upcast to its successor, `undefined` for a type this version does not know.
 */
export function asInstanceRecord(record: LogRecord): InstanceRecord | undefined {
  if (!INSTANCE_TYPES.has(record.type)) return undefined;
  const stored = known<StoredInstanceRecord>(record);
  if (stored.type !== 'DetectionHits') return stored;
  if (lastUpcast?.from !== record) {
    const to: InstanceRecord = {
      ...stored,
      type: LEGACY_READ_AS.DetectionHits,
      data: hitsRecordedFromLegacy(stored.data),
    };
    lastUpcast = { from: record, to };
  }
  return lastUpcast.to;
}

/**
 * A decoded setup authority log record, narrowed by its type name; `undefined` for a type this version does not know.
 */
export function asAuthorityRecord(record: LogRecord): AuthorityRecord | undefined {
  return AUTHORITY_TYPES.has(record.type) ? known<AuthorityRecord>(record) : undefined;
}

/**
 * The end of a `switch (record.type)` over the records a projection folds: `record` is `never` once
 * every type the projection names in its `folds` has a case, so a folded type without its case does
 * not compile (src/projections/types.ts). A record of a type this version does not
 * know stops at the boundary above, so this runs only through a hole in the types; what the switch
 * folds then stays as it was (`unchanged`).
 */
export function exhaustive<S>(_record: never, unchanged: S): S {
  return unchanged;
}

/**
 * A `{type, data}` pair (a decided event or a record) as a stored instance event, without upcasting; `undefined` if
 * unknown.
 */
export function asStoredInstanceEvent(e: Envelope): StoredInstanceEvent | undefined {
  return INSTANCE_TYPES.has(e.type) ? known<StoredInstanceEvent>(e) : undefined;
}
