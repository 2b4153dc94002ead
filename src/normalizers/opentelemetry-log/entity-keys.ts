import { EVENT_LIMITS } from '../../events/normalized-event.js';

/** `<prefix>:<value>` when the value is a non-empty string and the key fits the schema's bound. */
export function entityKey(prefix: string, value: unknown): string | undefined {
  if (typeof value !== 'string' || value === '') return undefined;
  const key = `${prefix}:${value}`;
  return key.length <= EVENT_LIMITS.entityKeyLength ? key : undefined;
}

/** The defined keys, deduplicated in first-seen order and capped at the schema's maximum count. */
export function entityKeyList(keys: readonly (string | undefined)[]): string[] {
  const unique = new Set<string>();
  for (const key of keys) if (key !== undefined) unique.add(key);
  return [...unique].slice(0, EVENT_LIMITS.entityKeys);
}

/** The value when it can be a schema short string (1..256 characters), else undefined. */
export function shortString(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 && value.length <= EVENT_LIMITS.shortString ? value : undefined;
}
