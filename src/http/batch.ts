import * as v from 'valibot';
import { HttpError } from './errors.js';
import { formatIssues } from '../kernel/issues.js';
import { safeParseChecked } from '../kernel/json/schema-check.js';

/** A batch body: an array of records, or `{records, context}`. */
export interface Batch {
  readonly records: readonly unknown[];
  readonly context?: Readonly<Record<string, unknown>>;
}

const BatchContext = v.custom<Record<string, unknown>>(
  (c) => c !== null && typeof c === 'object' && !Array.isArray(c),
  'expected an object',
);

/**
 * The schema of a batch body of at most `maxRecords` records: an array of records or a strict
 * `{records, context?}` (every unknown key named), context an object, at least one record. The
 * shape is told apart first, so a problem inside `{records, context}` is named at its own path.
 */
export function batchSchema(maxRecords: number) {
  const records = v.pipe(
    v.array(v.unknown()),
    v.minLength(1, 'expected at least one record'),
    v.maxLength(maxRecords, (issue) => `batch of ${issue.received} records exceeds the limit of ${maxRecords}`),
  );
  return v.pipe(
    v.union(
      [v.array(v.unknown()), v.looseObject({ records: v.array(v.unknown()) })],
      'expected an array of records, an object {records, context}, or one JSON object per line (Content-Type: ' +
        'application/x-ndjson)',
    ),
    v.transform((body): Record<string, unknown> => (Array.isArray(body) ? { records: body } : body)),
    // Strict, like strictObject, but naming every unknown key rather than the first.
    v.objectWithRest(
      { records, context: v.optional(BatchContext) },
      v.never('unknown key (expected records and context)'),
    ),
  );
}

/** The published description of a batch of `record`s (the records themselves are checked by validateRecords). */
export function batchDescription(record: v.GenericSchema) {
  const records = v.pipe(v.array(record), v.minLength(1));
  return v.union([records, v.strictObject({ records, context: v.optional(v.record(v.string(), v.unknown())) })]);
}

// One schema per configured limit, built once rather than per request.
const schemas = new Map<number, ReturnType<typeof batchSchema>>();

/**
 * Splits an ingestion body into records and context, or throws a 400 saying what is wrong (413 for too many records).
 */
export function batchOf(body: unknown, maxRecords: number): Batch {
  let schema = schemas.get(maxRecords);
  if (!schema) schemas.set(maxRecords, (schema = batchSchema(maxRecords)));
  const r = v.safeParse(schema, body);
  if (r.success) return r.output;
  const [first] = r.issues;
  if (r.issues.length === 1 && first.type === 'max_length') throw new HttpError(413, first.message);
  throw new HttpError(400, 'invalid batch', formatIssues(r.issues));
}

/**
 * Validates every record against `schema`; one 400 names every bad record (`records[3].severity: ...`).
 * A record the schema's compiled check passes is kept as it is, since valibot's output would only
 * be a copy of it (src/kernel/json/schema-check.ts); any other record is decided by valibot.
 */
export function validateRecords<S extends v.GenericSchema>(schema: S, records: readonly unknown[]): v.InferOutput<S>[] {
  const out: v.InferOutput<S>[] = [];
  const issues: string[] = [];
  for (let i = 0; i < records.length; i++) {
    const r = safeParseChecked(schema, records[i]);
    if (r.success) out.push(r.output);
    else if (issues.length < 200) issues.push(...formatIssues(r.issues, `records[${i}]`));
  }
  if (issues.length > 0) throw new HttpError(400, 'invalid records: the batch was not accepted', issues.slice(0, 200));
  return out;
}
