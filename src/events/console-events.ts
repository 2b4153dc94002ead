import * as v from 'valibot';
import { IsoDateTime } from './normalized-event.js';

/** Why a console session ended. */
export const SESSION_END_REASONS = ['signed_out', 'expired', 'idle', 'credential_revoked'] as const;

const Sha256Hex = v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/));

/**
 * `ConsoleSessionStarted`: a browser signed in to the console with a credential. Only the SHA-256
 * of the session secret is stored; the credential is named by its principal id, never by token.
 */
export const ConsoleSessionStartedSchema = v.strictObject({
  sessionHash: Sha256Hex,
  principal: v.string(),
  /** How the credential that opened the session was presented (`bearer`). */
  authentication: v.string(),
  /** The absolute end of the session, whatever its activity. */
  expiresAt: IsoDateTime,
  /** The session ends after this many minutes without a request. */
  idleMinutes: v.number(),
  sourceAddress: v.string(),
});

/** `ConsoleSessionEnded`: a console session ended (signed out, timed out, or its credential revoked). */
export const ConsoleSessionEndedSchema = v.strictObject({
  sessionHash: Sha256Hex,
  principal: v.string(),
  reason: v.picklist(SESSION_END_REASONS),
});

/** The console's events, by stored type name. */
export const CONSOLE_EVENTS = {
  ConsoleSessionStarted: ConsoleSessionStartedSchema,
  ConsoleSessionEnded: ConsoleSessionEndedSchema,
} as const;
