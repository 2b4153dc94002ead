import * as v from 'valibot';
import { NormalizedEventSchema } from './normalized-event.js';

/** Why requests were refused before reaching a handler. */
export const REFUSAL_REASONS = ['authentication_failed', 'throttled', 'overloaded', 'disk_full'] as const;

/** `AccessRecorded`: the normalized access event of one authenticated (or failed) `/api/v1` request. */
export const AccessRecordedSchema = v.strictObject({
  event: NormalizedEventSchema,
});

/**
 * `ApiRequestAudited`: the audit record of one `/api/v1` request (who, how, what, outcome); never a token or a body.
 */
export const ApiRequestAuditedSchema = v.strictObject({
  requestId: v.string(),
  principal: v.nullable(v.string()),
  authentication: v.string(),
  method: v.string(),
  route: v.string(),
  status: v.number(),
  durationMs: v.number(),
  sourceAddress: v.string(),
  /** The fingerprint of the bearer credential used (first 12 hex of its SHA-256), so rotations can be told apart. */
  credential: v.optional(v.string()),
  /** A hunt's request (`POST /api/v1/search`): what it asked and what it answered (also its `HuntSearched` record). */
  search: v.optional(
    v.strictObject({
      query: v.string(),
      since: v.string(),
      until: v.string(),
      output: v.picklist(['events', 'rows']),
      rows: v.number(),
      scanned: v.number(),
      complete: v.boolean(),
    }),
  ),
});

/**
 * `RequestsRefused`: requests from one source address refused for one reason within one interval,
 * counted instead of logged one by one, so a flood cannot fill the disk. The first failed
 * authentication of an interval is also logged in full (AccessRecorded + ApiRequestAudited); `count`
 * includes it.
 */
export const RequestsRefusedSchema = v.strictObject({
  /** The detectable access summary: category identity, class api_access, activity requests_refused. */
  event: NormalizedEventSchema,
  reason: v.picklist(REFUSAL_REASONS),
  status: v.number(),
  sourceAddress: v.string(),
  count: v.number(),
  firstAt: v.string(),
  lastAt: v.string(),
  /** Up to ten routes the requests were for. */
  routes: v.array(v.string()),
});

/** The access events of the instance (API requests and refusals), by stored type name. */
export const ACCESS_EVENTS = {
  AccessRecorded: AccessRecordedSchema,
  ApiRequestAudited: ApiRequestAuditedSchema,
  RequestsRefused: RequestsRefusedSchema,
} as const;
