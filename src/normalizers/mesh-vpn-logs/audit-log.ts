import { EVENT_LIMITS, type NormalizedEvent } from '../../events/normalized-event.js';
import { isoFromNanos } from '../../kernel/time.js';
import { type Decoded, at, fail, isAbsent, isObject, ok } from '../opentelemetry-log/decoded.js';
import { entityKey, entityKeyList } from '../opentelemetry-log/entity-keys.js';
import type { EventPlace } from '../record-id.js';
import { type TimeCandidate, firstTime, rfc3339Nanos, streamNanos } from './event-time.js';
import { MESH_ADAPTER, type MeshBatch } from './mesh-batch.js';

/** The audit event itself, where its fields sit, and when it happened. */
interface AuditParts {
  readonly body: Record<string, unknown>;
  readonly bodyPath: string;
  readonly wrapper: Readonly<Record<string, unknown>>;
  readonly time: bigint;
}

/**
 * Builds a `configuration_change` event from one configuration audit log event, either as the API
 * returns it (`eventTime`, `action`, ...) or wrapped by log streaming (`{event, fields:{recorded}, time}`).
 * `extra` carries envelope fields (`tailnetId`) that belong to every event of an API response.
 */
export function auditEvent(
  record: unknown,
  where: string,
  batch: MeshBatch,
  place: EventPlace,
  extra: Readonly<Record<string, unknown>>,
): Decoded<NormalizedEvent> {
  if (!isObject(record)) return fail(where, 'expected a configuration audit log event object');
  const parts = auditParts(record, where);
  if (!parts.ok) return parts;
  const { body, bodyPath, wrapper, time } = parts.value;
  const activity = activityOf(body.action, at(bodyPath, 'action'));
  if (!activity.ok) return activity;
  const actor = partyAt(body.actor, at(bodyPath, 'actor'));
  if (!actor.ok) return actor;
  const target = partyAt(body.target, at(bodyPath, 'target'));
  if (!target.ok) return target;
  const actorObject = actorOf(actor.value);
  const groupId = body.eventGroupID;
  return ok({
    schemaVersion: 1,
    id: place.id,
    category: 'configuration',
    class: 'configuration_change',
    activity: activity.value,
    // Audit logs record changes that were made, so every event is a success.
    outcome: 'success',
    time: isoFromNanos(time),
    ingestedAt: batch.ingestedAt,
    source: { adapter: MESH_ADAPTER, instance: 'configuration', recordId: place.recordId },
    entityKeys: entityKeyList([batch.meshnetKey, ...partyKeys(actor.value), ...partyKeys(target.value)]),
    ...(actorObject ? { actor: actorObject } : {}),
    ...(typeof groupId === 'string' && groupId !== '' ? { correlation: { uid: groupId } } : {}),
    // The event's own fields under their own names (old/new by reference: never copied twice).
    attributes: { ...extra, ...wrapper, ...body },
    rawReference: place.rawReference,
  });
}

/** Unwraps the log-streaming form and finds the time: `eventTime`, else stream `time`, else `fields.recorded`. */
function auditParts(record: Record<string, unknown>, where: string): Decoded<AuditParts> {
  const streamed = isObject(record.event);
  const body = streamed ? (record.event as Record<string, unknown>) : record;
  const bodyPath = streamed ? at(where, 'event') : where;
  const candidates: TimeCandidate[] = [
    { path: at(bodyPath, 'eventTime'), value: body.eventTime, parse: rfc3339Nanos, expected: 'an RFC 3339 date-time' },
  ];
  const wrapper: Record<string, unknown> = {};
  if (streamed) {
    const fields = isObject(record.fields) ? record.fields : {};
    candidates.push(
      { path: at(where, 'time'), value: record.time, parse: streamNanos, expected: 'epoch seconds or a date-time' },
      { path: at(where, 'fields.recorded'), value: fields.recorded, parse: streamNanos, expected: 'a date-time' },
    );
    if (!isAbsent(record.fields)) wrapper.fields = record.fields;
    if (!isAbsent(record.time)) wrapper.time = record.time;
  }
  const time = firstTime(candidates);
  return time.ok ? ok({ body, bodyPath, wrapper, time: time.value }) : time;
}

/** The action (`UPDATE`, `DISABLE`, ...) in lower_snake_case. */
function activityOf(action: unknown, path: string): Decoded<string> {
  if (typeof action !== 'string') return fail(path, 'expected the action name as a string');
  const snake = action
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  if (snake === '' || snake.length > EVENT_LIMITS.shortString)
    return fail(path, 'expected an action name of letters and digits');
  return ok(snake);
}

function partyAt(value: unknown, path: string): Decoded<Record<string, unknown> | undefined> {
  if (isAbsent(value)) return ok(undefined);
  return isObject(value) ? ok(value) : fail(path, 'expected an object');
}

/** `user:` of a login name (actors) and `node:` of a node's stable id (actors and targets). */
function partyKeys(party: Record<string, unknown> | undefined): (string | undefined)[] {
  return [entityKey('user', party?.loginName), isNode(party) ? entityKey('node', party?.id) : undefined];
}

function isNode(party: Record<string, unknown> | undefined): boolean {
  return typeof party?.type === 'string' && party.type.toUpperCase() === 'NODE';
}

/** `{user, node, id, type, displayName}`: `user` is the login name, `node` the id when a node acted. */
function actorOf(actor: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (actor === undefined) return undefined;
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
  const fields: Record<string, string | undefined> = {
    user: text(actor.loginName),
    node: isNode(actor) ? text(actor.id) : undefined,
    id: text(actor.id),
    type: text(actor.type),
    displayName: text(actor.displayName),
  };
  const out = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
  return Object.keys(out).length > 0 ? out : undefined;
}
