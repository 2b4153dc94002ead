import * as v from 'valibot';

const Head = v.strictObject({ size: v.number(), root: v.string() });

/**
 * `SignedHeadsRewound`: the signer had signed heads past the store's last commit (the writer stopped
 * between a signature and its commit, so none of those records was ever acknowledged) and took the
 * store up again at its own last signed head; the heads it gave up are named (docs/log.md, "Signed
 * heads"). The signer's journal says the same.
 */
export const SignedHeadsRewoundSchema = v.strictObject({ from: Head, to: Head });

/**
 * `LogTailQuarantined`: records past the last signed head (not written by a signing Vigil) were moved
 * out of the store into `file` by `vigil log quarantine-tail`, by the operator named as the actor.
 */
export const LogTailQuarantinedSchema = v.strictObject({
  fromSeq: v.number(),
  toSeq: v.number(),
  /** Where their export lines (with their stored bytes) were written. */
  file: v.string(),
  /** SHA-256 hex of that file. */
  digest: v.string(),
  reason: v.optional(v.string()),
});

/**
 * `LogKeyRotated`: the log's signing key was replaced; `note` is the rotation note (src/log/key-rotation.ts),
 * signed by the new key and cosigned by the old one, so a verifier holding either key accepts the other
 * (docs/log.md, "Rotating the signing key").
 */
export const LogKeyRotatedSchema = v.strictObject({ note: v.pipe(v.string(), v.maxLength(4096)) });

/** The log's own events, by stored type name. */
export const LOG_EVENTS = {
  SignedHeadsRewound: SignedHeadsRewoundSchema,
  LogTailQuarantined: LogTailQuarantinedSchema,
  LogKeyRotated: LogKeyRotatedSchema,
} as const;
