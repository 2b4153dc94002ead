import { verify } from '../../kernel/ed25519.js';
import { ENVELOPE_LIMITS } from './envelope.js';
import type { OpenedEnvelope } from './open-envelope.js';
import { PAYLOAD_TYPE, paeParts } from './pae.js';

/**
 * The signed bytes of the last envelope verified, in a buffer kept for the next: a fresh buffer
 * the size of the payload each time (300 KB for 500 events) is freshly mapped memory each time,
 * a page fault every 4 KiB (docs/benchmarks.md). It grows to at most ENVELOPE_LIMITS.signedBytes,
 * the most an opened envelope signs.
 */
let signedScratch = Buffer.alloc(0);

/** Whether an envelope's signature verifies under a collector's Ed25519 public key. */
export function verifyEnvelope(envelope: OpenedEnvelope, publicKey: Uint8Array): boolean {
  const [head, body] = paeParts(PAYLOAD_TYPE, envelope.payloadBytes);
  const length = head.byteLength + body.byteLength;
  if (signedScratch.byteLength < length)
    signedScratch = Buffer.allocUnsafeSlow(
      Math.max(length, Math.min(ENVELOPE_LIMITS.signedBytes, 2 * signedScratch.byteLength)),
    );
  signedScratch.set(head, 0);
  signedScratch.set(body, head.byteLength);
  // Verification is synchronous: nothing else uses the buffer before it returns.
  return verify(envelope.signature, signedScratch.subarray(0, length), publicKey);
}
