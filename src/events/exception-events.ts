import * as v from 'valibot';

/**
 * What an exception applies to: one rule, every rule carrying a tag (`attack.t1110`), or every rule. Rules are
 * matched when a match is decided, so a rule imported later with the tag is covered too.
 */
export const ExceptionScopeSchema = v.variant('kind', [
  v.strictObject({ kind: v.literal('rule'), ruleId: v.string() }),
  v.strictObject({ kind: v.literal('tag'), tag: v.string() }),
  v.strictObject({ kind: v.literal('all') }),
]);

/**
 * What an exception says, as created or as changed: the condition on event fields in Sigma's detection syntax (search
 * identifiers and a `condition`), who answers for it and why, and until when (no `expiresAt`: permanent, which only an
 * admin may make).
 */
export const EXCEPTION_TERMS = {
  scope: ExceptionScopeSchema,
  detection: v.record(v.string(), v.unknown()),
  reason: v.string(),
  owner: v.string(),
  ticket: v.optional(v.string()),
  expiresAt: v.optional(v.string()),
};

/** `ExceptionCreated`: an analyst excepted matching events from alerting; `fromAlertId` when made from an alert. */
export const ExceptionCreatedSchema = v.strictObject({
  exceptionId: v.string(),
  ...EXCEPTION_TERMS,
  fromAlertId: v.optional(v.string()),
  principal: v.string(),
  authentication: v.string(),
});

/** `ExceptionChanged`: an exception's terms replaced as a whole, with why (`comment`). */
export const ExceptionChangedSchema = v.strictObject({
  exceptionId: v.string(),
  ...EXCEPTION_TERMS,
  comment: v.string(),
  principal: v.string(),
  authentication: v.string(),
});

/** `ExceptionRevoked`: an exception ended before its time, with why. */
export const ExceptionRevokedSchema = v.strictObject({
  exceptionId: v.string(),
  comment: v.string(),
  principal: v.string(),
  authentication: v.string(),
});

/**
 * `ExceptionExpired`: a scheduled check saw an exception's `expiresAt` pass. An exception stops applying at
 * `expiresAt` by itself (a match is decided against its time); this record puts the end in its history.
 */
export const ExceptionExpiredSchema = v.strictObject({
  exceptionId: v.string(),
  expiresAt: v.string(),
});

/** `ExceptionExpiryReminded`: an exception is about to expire; the reminder alert raised for its owner. */
export const ExceptionExpiryRemindedSchema = v.strictObject({
  exceptionId: v.string(),
  expiresAt: v.string(),
  alertId: v.string(),
});

/**
 * `MatchesExcepted`: rule matches an exception kept from alerting. The events stay stored as evidence; each entry is
 * one match (one rule, its events), counted on the exception and the rule.
 */
export const MatchesExceptedSchema = v.strictObject({
  matches: v.array(
    v.strictObject({
      exceptionId: v.string(),
      ruleId: v.string(),
      eventIds: v.array(v.string()),
      /** The match's event time (its latest event), ISO 8601. */
      time: v.string(),
    }),
  ),
});

/** The exception events of the instance, by stored type name. */
export const EXCEPTION_EVENTS = {
  ExceptionCreated: ExceptionCreatedSchema,
  ExceptionChanged: ExceptionChangedSchema,
  ExceptionRevoked: ExceptionRevokedSchema,
  ExceptionExpired: ExceptionExpiredSchema,
  ExceptionExpiryReminded: ExceptionExpiryRemindedSchema,
  MatchesExcepted: MatchesExceptedSchema,
} as const;
