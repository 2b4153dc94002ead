import * as v from 'valibot';
import { HttpError, formatIssues } from './errors.js';

/** A batch body: an array of records, or `{records, context}`. */
export interface Batch {
  readonly records: readonly unknown[];
  readonly context?: Readonly<Record<string, unknown>>;
}

/** Splits an ingestion body into records and context, or throws a 400/413 saying what is wrong. */
export function batchOf(body: unknown, maxRecords: number): Batch {
  let batch: Batch;
  if (Array.isArray(body)) batch = { records: body };
  else if (body !== null && typeof body === 'object' && Array.isArray((body as { records?: unknown }).records)) {
    const { records, context, ...rest } = body as { records: unknown[]; context?: unknown };
    const extra = Object.keys(rest);
    if (extra.length > 0) throw new HttpError(400, 'invalid batch', extra.slice(0, 10).map((k) => `${k}: unknown key (expected records and context)`));
    if (context !== undefined && (context === null || typeof context !== 'object' || Array.isArray(context))) {
      throw new HttpError(400, 'invalid batch', ['context: expected an object']);
    }
    batch = { records, ...(context !== undefined ? { context: context as Record<string, unknown> } : {}) };
  } else throw new HttpError(400, 'invalid batch', ['(body): expected an array of records or an object {records, context}']);
  if (batch.records.length === 0) throw new HttpError(400, 'invalid batch', ['records: expected at least one record']);
  if (batch.records.length > maxRecords) throw new HttpError(413, `batch of ${batch.records.length} records exceeds the limit of ${maxRecords}`);
  return batch;
}

/** Validates every record against `schema`; one 400 names every bad record (`records[3].severity: ...`). */
export function validateRecords<S extends v.GenericSchema>(schema: S, records: readonly unknown[]): v.InferOutput<S>[] {
  const out: v.InferOutput<S>[] = [];
  const issues: string[] = [];
  for (let i = 0; i < records.length; i++) {
    const r = v.safeParse(schema, records[i]);
    if (r.success) out.push(r.output);
    else if (issues.length < 200) issues.push(...formatIssues(r.issues, `records[${i}]`));
  }
  if (issues.length > 0) throw new HttpError(400, 'invalid records: the batch was not accepted', issues.slice(0, 200));
  return out;
}
