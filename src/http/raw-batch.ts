/**
 * The body of `POST /api/v1/ingest/{normalizer}` as shippers send it: a JSON batch (src/http/body.ts;
 * a line of JSON lines that is not JSON is one refused record), a source's own response envelope as
 * the one record of the batch, or, for syslog-rfc5424, plain text
 * of one RFC 5424 message per line or in octet-counted frames (RFC 6587), framed as the TCP listener
 * frames a connection.
 */
import { isUtf8 } from 'node:buffer';
import type { Context } from 'hono';
import { frameDecoder, type Frame } from '../services/listeners/syslog-framing.js';
import { batchOf, type Batch } from './batch.js';
import { BATCH_SHAPES, readBatchBodyText, readBodyBytes } from './body.js';
import { HttpError } from './errors.js';

/** A raw batch: its records, where each came from, and the records that could not be read at all. */
export interface RawBatch extends Batch {
  /** The line number (from 1) of each record, when the body was read line by line. */
  readonly lines?: readonly number[];
  /** Records refused before any normalizer saw them (a frame that is not UTF-8), by index: why. */
  readonly unreadable: ReadonlyMap<number, string>;
}

const isTextPlain = (type: string | undefined) => type?.split(';')[0]!.trim().toLowerCase() === 'text/plain';

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * A body that is a source's own whole answer rather than a batch is the one record of the batch:
 * an OTLP/JSON ExportLogsServiceRequest as the OpenTelemetry SDK exporters send it, and a Tailscale
 * API response (`{logs}`, `{version, tailnetId, logs}`) as the API returns it. The normalizers
 * read both shapes as one record, so the events and their ids are those of the wrapped `[body]`.
 */
function envelopeAsBatch(normalizer: string, body: unknown): unknown {
  if (!isObject(body) || 'records' in body) return body;
  const isEnvelope =
    (normalizer === 'opentelemetry-log' && 'resourceLogs' in body) ||
    (normalizer === 'mesh-vpn-logs' && 'logs' in body);
  return isEnvelope ? [body] : body;
}

/**
 * Syslog text as the `{message}` records the syslog-rfc5424 normalizer takes, with the line of each
 * message when the frames are lines. The framing is the TCP listener's (src/services/listeners/
 * syslog-framing.ts): octet-counted when the body begins with a digit, one message per line
 * otherwise (blank lines skipped, `\r\n` endings fine). A frame is at most the body, so none is oversized.
 */
function syslogText(body: Buffer, maxRecords: number): RawBatch {
  // A leading byte-order mark is an editor's, not the first message's.
  const bytes = body.length >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? body.subarray(3) : body;
  const decoder = frameDecoder(Math.max(1, bytes.length));
  const frames: Frame[] = [];
  const lines: number[] = [];
  if (bytes.length > 0 && bytes[0]! >= 0x30 && bytes[0]! <= 0x39) {
    frames.push(...decoder.push(bytes));
    if (frames.some((f) => f.kind !== 'message') || decoder.pending() > 0) {
      const fatal = frames.find((f) => f.kind === 'fatal');
      throw new HttpError(400, 'malformed octet-counted syslog (RFC 6587)', [
        `(body): ${fatal?.kind === 'fatal' ? fatal.reason : 'the body ends inside a frame'}`,
      ]);
    }
  } else {
    // Fed a line at a time, so each message's line number is known.
    let start = 0;
    for (let line = 1; start < bytes.length; line++) {
      const lf = bytes.indexOf(0x0a, start);
      const end = lf < 0 ? bytes.length : lf;
      const out = decoder.push(Buffer.concat([bytes.subarray(start, end), Buffer.from([0x0a])]));
      for (const f of out) {
        frames.push(f);
        lines.push(line);
      }
      start = end + 1;
    }
  }
  if (frames.length > maxRecords)
    throw new HttpError(413, `batch of ${frames.length} records exceeds the limit of ${maxRecords}`);
  const unreadable = new Map<number, string>();
  const records = frames.map((f, i) => {
    if (f.kind === 'message' && isUtf8(f.bytes)) return { message: f.bytes.toString('utf8') };
    unreadable.set(i, 'message: not valid UTF-8');
    return null;
  });
  const batch = batchOf(records, maxRecords);
  return lines.length > 0 ? { ...batch, lines, unreadable } : { ...batch, unreadable };
}

/**
 * Reads the body of a raw ingest request for `normalizer` within `limits`: JSON or JSON lines as
 * every ingest route takes them, a source's own envelope, or `text/plain` syslog for syslog-rfc5424.
 * Another media type is a 415 naming the accepted ones.
 */
export async function readRawBatch(
  c: Context,
  normalizer: string,
  limits: { readonly bodyBytes: number; readonly recordsPerRequest: number },
): Promise<RawBatch> {
  if (isTextPlain(c.req.header('content-type'))) {
    if (normalizer !== 'syslog-rfc5424')
      throw new HttpError(415, `text/plain is taken by syslog-rfc5424 only; expected ${BATCH_SHAPES}`);
    const bytes = await readBodyBytes(c, limits.bodyBytes);
    if (bytes.byteLength === 0) throw new HttpError(400, 'request body is empty; expected one syslog message per line');
    return syslogText(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), limits.recordsPerRequest);
  }
  const unreadable = new Map<number, string>();
  const body = await readBatchBodyText(c, limits.bodyBytes, unreadable).catch((err: unknown) => {
    if (normalizer === 'syslog-rfc5424' && err instanceof HttpError && err.status === 415)
      throw new HttpError(415, `expected ${BATCH_SHAPES}, or text/plain: one syslog message per line`);
    throw err;
  });
  const batch = batchOf(envelopeAsBatch(normalizer, body.value), limits.recordsPerRequest);
  return body.lines ? { ...batch, lines: body.lines, unreadable } : { ...batch, unreadable };
}
