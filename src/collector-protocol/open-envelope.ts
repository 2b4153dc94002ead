import { createHash } from 'node:crypto';
import * as v from 'valibot';
import { formatIssues } from '../http/errors.js';
import { CanonicalizationError, canonicalBytes } from './jcs.js';
import { ENVELOPE_LIMITS, EnvelopeSchema, type Payload } from './envelope.js';
import { PAYLOAD_TYPE, pae } from './pae.js';
import { decodeStrictBase64 } from './strict-base64.js';
import { parseStrictJson } from './strict-json.js';

/** An envelope whose form is sound, ready for signature verification against the collector's key. */
export interface OpenedEnvelope {
  readonly payload: Payload;
  readonly signature: Uint8Array;
  /** The bytes the signature covers: PAE(type, JCS(payload)). */
  readonly signedBytes: Uint8Array;
  /** SHA-256 hex of the signed bytes: what idempotent retries compare. */
  readonly digest: string;
}

/** Why an envelope was refused before verification. */
export interface EnvelopeFault {
  readonly fault: 'malformed' | 'too_large';
  readonly message: string;
  readonly issues?: readonly string[];
  /** The payload's collectorId when it could be read, for the rejection record. */
  readonly collectorId?: string;
}

/** The result of opening transport bytes. */
export type OpenResult = { readonly ok: true; readonly envelope: OpenedEnvelope } | ({ readonly ok: false } & EnvelopeFault);

/** The signed bytes of a payload: DSSE PAE over its RFC 8785 canonical JSON. */
export function signedBytesOf(payload: unknown): Uint8Array {
  return pae(PAYLOAD_TYPE, canonicalBytes(payload));
}

function peekCollectorId(value: unknown): string | undefined {
  const id = (value as { payload?: { collectorId?: unknown } } | null)?.payload?.collectorId;
  return typeof id === 'string' && v.is(EnvelopeSchema.entries.payload.entries.collectorId, id) ? id : undefined;
}

/**
 * Opens an envelope's transport bytes: strict JSON (UTF-8, no duplicate keys), the schema, the
 * canonical signed bytes within their cap, and a canonical base64 signature of exactly 64 bytes.
 * Pure and total: every failure is a value.
 */
export function openEnvelope(bytes: Uint8Array): OpenResult {
  if (bytes.byteLength > ENVELOPE_LIMITS.transportBytes) return { ok: false, fault: 'too_large', message: `envelope exceeds ${ENVELOPE_LIMITS.transportBytes} bytes` };
  const parsed = parseStrictJson(bytes);
  if (!parsed.ok) return { ok: false, fault: 'malformed', message: 'malformed envelope', issues: [`(body): ${parsed.error}`] };
  const collectorId = peekCollectorId(parsed.value);
  const who = collectorId !== undefined ? { collectorId } : {};
  const checked = v.safeParse(EnvelopeSchema, parsed.value);
  if (!checked.success) return { ok: false, fault: 'malformed', message: 'malformed envelope', issues: formatIssues(checked.issues), ...who };
  let signedBytes: Uint8Array;
  try {
    // The payload as received (not the schema's copy) is what the collector signed.
    signedBytes = signedBytesOf((parsed.value as { payload: unknown }).payload);
  } catch (err) {
    if (!(err instanceof CanonicalizationError)) throw err;
    return { ok: false, fault: 'malformed', message: 'malformed envelope', issues: [`payload: ${err.message}`], ...who };
  }
  if (signedBytes.byteLength > ENVELOPE_LIMITS.signedBytes) {
    return { ok: false, fault: 'too_large', message: `signed payload exceeds ${ENVELOPE_LIMITS.signedBytes} bytes`, ...who };
  }
  const signature = decodeStrictBase64(checked.output.signature, 64);
  if (!signature || signature.byteLength !== 64) {
    return { ok: false, fault: 'malformed', message: 'malformed envelope', issues: ['signature: expected canonical standard base64 of 64 bytes'], ...who };
  }
  const digest = createHash('sha256').update(signedBytes).digest('hex');
  return { ok: true, envelope: { payload: checked.output.payload, signature, signedBytes, digest } };
}
