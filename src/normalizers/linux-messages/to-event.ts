import { EVENT_LIMITS, type Category, type NormalizedEvent } from '../../events/normalized-event.js';
import { placesOf } from '../record-id.js';
import type { NormalizeContext } from '../types.js';
import type { RecognizedMessage } from './types.js';

/** How an unrecognized line is filed. */
export interface Fallback {
  readonly category: Category;
  readonly severity: number | undefined;
}

/** Everything a Linux-log normalizer knows about one record, ready to become a NormalizedEvent. */
export interface LinuxEventParts {
  readonly adapter: string;
  readonly record: unknown;
  readonly ctx: NormalizeContext;
  readonly time: string;
  /** The emitting host, when known. */
  readonly host: string | undefined;
  readonly recognized: RecognizedMessage | undefined;
  readonly fallback: Fallback;
  /** The source's own fields, named as the source names them. */
  readonly attributes: Record<string, unknown>;
  /** Source-level entity keys added after the recognizer's (host, sending unit, process). */
  readonly extraKeys: readonly (string | undefined)[];
}

/** Deduplicated, non-empty, within the schema's length and count bounds. */
export function boundedEntityKeys(keys: readonly (string | undefined)[]): string[] {
  const out = new Set<string>();
  for (const key of keys) {
    if (out.size >= EVENT_LIMITS.entityKeys) break;
    // A key is `<prefix>:<value>`; one with nothing after the colon names nothing.
    if (key !== undefined && key.length <= EVENT_LIMITS.entityKeyLength && !key.endsWith(':')) out.add(key);
  }
  return [...out];
}

/** The source's attributes plus the recognizer's fields under names the source does not already use. */
function mergeAttributes(
  source: Record<string, unknown>,
  fields: Readonly<Record<string, string>>,
): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const k of Object.keys(fields)) {
    if (Object.hasOwn(source, k)) continue;
    if (!out) {
      out = {};
      for (const s of Object.keys(source)) setOwn(out, s, source[s]);
    }
    setOwn(out, k, fields[k]);
  }
  return out ?? source;
}

/** Sets an own, enumerable property, even one named `__proto__` (which plain assignment would not create). */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/** The `source.instance`: the emitting host, or `-` when unknown. */
export function instanceOf(host: string | undefined): string {
  if (host === undefined || host === '') return '-';
  return host.length > EVENT_LIMITS.shortString ? host.slice(0, EVENT_LIMITS.shortString) : host;
}

/** Builds the NormalizedEvent of one Linux log record from its recognition (or its fallback filing). */
export function linuxEvent(parts: LinuxEventParts): NormalizedEvent {
  const { adapter, record, ctx, recognized: r } = parts;
  const severity = r ? r.severity : parts.fallback.severity;
  const place = placesOf(adapter, ctx.logType ?? '', record)();
  return {
    schemaVersion: 1,
    id: place.id,
    category: r ? r.category : parts.fallback.category,
    class: r ? r.class : 'log',
    activity: r ? r.activity : 'message',
    outcome: r ? r.outcome : 'unknown',
    time: parts.time,
    ingestedAt: ctx.ingestedAt,
    ...(severity === undefined ? {} : { severity }),
    source: { adapter, instance: instanceOf(parts.host), recordId: place.recordId },
    entityKeys: boundedEntityKeys([...(r?.entityKeys ?? []), ...parts.extraKeys]),
    ...(r?.actor ? { actor: r.actor } : {}),
    ...(r?.sourceEndpoint ? { sourceEndpoint: r.sourceEndpoint } : {}),
    ...(r?.destinationEndpoint ? { destinationEndpoint: r.destinationEndpoint } : {}),
    ...(r?.service ? { service: r.service } : {}),
    attributes: r ? mergeAttributes(parts.attributes, r.fields) : parts.attributes,
    rawReference: place.rawReference,
  };
}
