import { Packr } from 'msgpackr';
import type { PubAck } from '@nats-io/jetstream';
import { FatalStorageError } from './event-log.js';
import type { LogRecord, NewRecord } from '../kernel/record.js';

/** How long an append retries a publish the stream did not take (a server restarting, a stream leader moving). */
export const DEFAULT_RETRY_WINDOW_MS = 30_000;
const RETRY_PAUSE_MS = 250;
/**
 * Pulls of a follower's consumer expire after this (heartbeats at half): a consumer lost with its server is recreated
 * in seconds.
 */
export const FOLLOW_EXPIRES_MS = 5000;

/** The header a batch message carries its signed head in (base64 of the note: a header value holds no newline). */
export const HEAD_HEADER = 'Vigil-Head';

// A batch message is a msgpack array of the records' stored bytes: the same bytes the chain hashes.
const packr = new Packr({ useRecords: false, mapsAsObjects: true, variableMapSize: true });

/** The stored bytes of a batch message's records; throws on a message that is not a batch. */
export function unpackBatch(data: Uint8Array): Uint8Array[] {
  const value: unknown = packr.unpack(data);
  if (!Array.isArray(value) || value.length === 0 || !value.every((b) => b instanceof Uint8Array))
    throw new Error('a stream message is not a Vigil batch');
  return value as Uint8Array[];
}

/** A stored record as the record to append that produces it. */
export function toNew(r: LogRecord): NewRecord {
  return { type: r.type, at: r.at, ...(r.actor ? { actor: r.actor } : {}), data: r.data };
}

/** A batch message: a msgpack array of the records' stored bytes. */
export function packBatch(encoded: readonly Uint8Array[]): Uint8Array {
  return packr.pack(encoded);
}

/**
 * Publishes again (same message id, same expectation) until the stream answers or the retry
 * window ends. Safe whatever became of the earlier attempts: one that was stored is answered as a
 * duplicate with its sequence. A wrong last sequence now means another writer moved the stream on.
 */
export async function republish(publish: () => Promise<PubAck>, first: unknown, deadline: number): Promise<PubAck> {
  let last = first;
  let previousWrongSequence = false;
  for (;;) {
    const wrongSequence = /wrong last sequence/i.test((last as Error)?.message ?? '');
    // The first attempt may have raced an earlier batch's retry; a second refusal is final.
    if (wrongSequence && previousWrongSequence)
      throw new FatalStorageError(`another writer appended to the stream: ${(last as Error).message}`);
    previousWrongSequence = wrongSequence;
    if (performance.now() >= deadline) throw last;
    if (!wrongSequence) await new Promise((r) => setTimeout(r, RETRY_PAUSE_MS));
    try {
      return await publish();
    } catch (err) {
      last = err;
    }
  }
}
