import { createHash } from 'node:crypto';
import * as v from 'valibot';
import { formatIssues } from '../../kernel/issues.js';
import { sign } from '../../kernel/ed25519.js';
import { CanonicalizationError, canonicalBytes, canonicalizeInOrder } from '../../kernel/canonical-json.js';
import { ENVELOPE_LIMITS, EnvelopeSchema, type Payload } from './envelope.js';
import { asBuffer } from '../../kernel/json/buffer-text.js';
import { safeParseChecked } from '../../kernel/json/schema-check.js';
import { PAYLOAD_TYPE, pae, paeParts } from './pae.js';
import { decodeStrictBase64, encodeBase64 } from '../../kernel/strict-base64.js';
import { parseStrictJson, type StrictJsonResult } from '../../kernel/json/strict-json.js';

/** An envelope whose form is sound, ready for signature verification against the collector's key. */
export interface OpenedEnvelope {
  readonly payload: Payload;
  readonly signature: Uint8Array;
  /** JCS(payload), as received: the signature covers PAE(type, these bytes) (`signedBytesOfEnvelope`). */
  readonly payloadBytes: Uint8Array;
  /** SHA-256 hex of the signed bytes: what idempotent retries compare. */
  readonly digest: string;
}

/** The bytes an envelope's signature covers: PAE(type, JCS(payload)). */
export function signedBytesOfEnvelope(envelope: OpenedEnvelope): Uint8Array {
  return pae(PAYLOAD_TYPE, envelope.payloadBytes);
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
export type OpenResult =
  { readonly ok: true; readonly envelope: OpenedEnvelope } | ({ readonly ok: false } & EnvelopeFault);

/** The signed bytes of a payload: DSSE PAE over its RFC 8785 canonical JSON. */
export function signedBytesOf(payload: unknown): Uint8Array {
  return pae(PAYLOAD_TYPE, canonicalBytes(payload));
}

/**
 * Signs a payload into an envelope that carries it in canonical member order, so that its JSON
 * text (`JSON.stringify(envelope)`) holds the payload's members in JCS order and the server
 * canonicalizes it in one native pass (docs/collector-protocol.md, "Verification"). Any member order verifies.
 */
export function sealEnvelope<P extends object>(
  payload: P,
  seed: Uint8Array,
): { algorithm: 'Ed25519'; payload: P; signature: string } {
  const body = canonicalBytes(payload);
  const signature = encodeBase64(sign(pae(PAYLOAD_TYPE, body), seed));
  return { algorithm: 'Ed25519', payload: JSON.parse(Buffer.from(body).toString('utf8')) as P, signature };
}

function peekCollectorId(value: unknown): string | undefined {
  const id = (value as { payload?: { collectorId?: unknown } } | null)?.payload?.collectorId;
  return typeof id === 'string' && v.is(EnvelopeSchema.entries.payload.entries.collectorId, id) ? id : undefined;
}

/** How a canonical envelope's text begins: its members are exactly these three, in this order. */
const CANONICAL_PREFIX = Buffer.from('{"algorithm":"Ed25519","payload":');

/**
 * The JCS bytes of the payload as received (not the schema's copy: that is what the collector
 * signed), the cheapest way the envelope's text allows: its own bytes when the whole text is
 * canonical (a sealed envelope without escapes), one native JSON.stringify when its keys are in
 * order (a sealed envelope), else the general canonicalization.
 */
function canonicalPayload(
  bytes: Uint8Array,
  parsed: Extract<StrictJsonResult, { ok: true }>,
  signature: string,
): Uint8Array {
  if (parsed.canonical) {
    // Canonical text has no escapes: the signature's text is the string itself.
    const suffix = Buffer.from(`,"signature":"${signature}"}`);
    const b = asBuffer(bytes);
    const end = b.byteLength - suffix.byteLength;
    if (
      end >= CANONICAL_PREFIX.byteLength &&
      b.subarray(0, CANONICAL_PREFIX.byteLength).equals(CANONICAL_PREFIX) &&
      b.subarray(end).equals(suffix)
    )
      return bytes.subarray(CANONICAL_PREFIX.byteLength, end);
  }
  const received = (parsed.value as { payload: unknown }).payload;
  return parsed.keysInOrder ? Buffer.from(canonicalizeInOrder(received), 'utf8') : canonicalBytes(received);
}

/**
 * Opens an envelope's transport bytes: strict JSON (UTF-8, no duplicate keys), the schema, the
 * canonical signed bytes within their cap, and a canonical base64 signature of exactly 64 bytes.
 * Pure and total: every failure is a value.
 */
export function openEnvelope(bytes: Uint8Array): OpenResult {
  if (bytes.byteLength > ENVELOPE_LIMITS.transportBytes)
    return { ok: false, fault: 'too_large', message: `envelope exceeds ${ENVELOPE_LIMITS.transportBytes} bytes` };
  const parsed = parseStrictJson(bytes);
  if (!parsed.ok)
    return { ok: false, fault: 'malformed', message: 'malformed envelope', issues: [`(body): ${parsed.error}`] };
  const collectorId = peekCollectorId(parsed.value);
  const who = collectorId !== undefined ? { collectorId } : {};
  const checked = safeParseChecked(EnvelopeSchema, parsed.value);
  if (!checked.success)
    return {
      ok: false,
      fault: 'malformed',
      message: 'malformed envelope',
      issues: formatIssues(checked.issues),
      ...who,
    };
  let payloadBytes: Uint8Array;
  try {
    payloadBytes = canonicalPayload(bytes, parsed, checked.output.signature);
  } catch (err) {
    if (!(err instanceof CanonicalizationError)) throw err;
    return {
      ok: false,
      fault: 'malformed',
      message: 'malformed envelope',
      issues: [`payload: ${err.message}`],
      ...who,
    };
  }
  const signedParts = paeParts(PAYLOAD_TYPE, payloadBytes);
  if (signedParts[0].byteLength + payloadBytes.byteLength > ENVELOPE_LIMITS.signedBytes) {
    return {
      ok: false,
      fault: 'too_large',
      message: `signed payload exceeds ${ENVELOPE_LIMITS.signedBytes} bytes`,
      ...who,
    };
  }
  const signature = decodeStrictBase64(checked.output.signature, 64);
  if (!signature || signature.byteLength !== 64) {
    return {
      ok: false,
      fault: 'malformed',
      message: 'malformed envelope',
      issues: ['signature: expected canonical standard base64 of 64 bytes'],
      ...who,
    };
  }
  const digest = createHash('sha256').update(signedParts[0]).update(payloadBytes).digest('hex');
  return { ok: true, envelope: { payload: checked.output.payload, signature, payloadBytes, digest } };
}
