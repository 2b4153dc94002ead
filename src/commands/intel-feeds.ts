import { canonicalJson } from '../kernel/canonical-json.js';
import type { Indicator, IndicatorSet } from '../detection/intel/types.js';
import type { EventData } from '../events/union.js';
import type { IntelState } from '../projections/intel.js';
import { accept, type DomainEvent, type Decision } from './decision.js';

/** Indicators one `IntelIndicatorsChanged` record carries at most (a feed of a million is 500 records). */
export const INDICATORS_PER_RECORD = 2000;

/** Unsupported indicators a feed's update lists by name (all are counted). */
export const UNSUPPORTED_LISTED = 200;

/** How a fetch's set relates to what the feed held: the whole set (a file, a list) or what is new (TAXII, posted). */
export type FeedUpdateMode = 'replace' | 'merge';

/** A feed's update as read: its name and kind, the version of what was read, and the indicators in it. */
export interface FeedUpdate {
  readonly feed: string;
  readonly kind: EventData<'IntelFeedUpdated'>['kind'];
  readonly version: string;
  readonly set: IndicatorSet;
  readonly mode: FeedUpdateMode;
}

/** What an update changed. */
export interface FeedUpdateResult {
  readonly feed: string;
  readonly version: string;
  readonly changed: boolean;
  readonly added: number;
  readonly removed: number;
  readonly expired: number;
  readonly total: number;
  readonly unsupported: EventData<'IntelFeedUpdated'>['unsupported'];
  readonly unsupportedCount: number;
}

/**
 * Decides a feed's update (docs/intel.md): the indicators that are new or changed (by their canonical JSON) are added,
 * and with `replace` those the feed no longer carries are removed, in records of INDICATORS_PER_RECORD, then one
 * `IntelFeedUpdated` with the counts and the unsupported ones. Nothing new (same indicators, same version): no
 * events. `expired` counts the indicators whose `validUntil` has passed at `now` (kept: an older event still matches
 * them at its own time). Pure.
 */
export function decideFeedUpdate(
  intel: IntelState,
  u: FeedUpdate,
  now: string,
): Decision<FeedUpdateResult & { readonly addedIndicators: readonly Indicator[] }> {
  const held = intel.indicators.get(u.feed);
  const nowMs = Date.parse(now);
  const added: Indicator[] = [];
  const seen = new Set<string>();
  for (const i of u.set.indicators) {
    if (seen.has(i.id)) continue;
    seen.add(i.id);
    const before = held?.get(i.id)?.indicator;
    if (!before || canonicalJson(before) !== canonicalJson(i)) added.push(i);
  }
  const removed = u.mode === 'replace' && held ? [...held.keys()].filter((id) => !seen.has(id)) : [];
  const total = (held?.size ?? 0) + added.filter((i) => !held?.has(i.id)).length - removed.length;
  let expired = 0;
  for (const i of u.set.indicators) if (i.validUntil !== undefined && Date.parse(i.validUntil) <= nowMs) expired++;
  // What the feed's `IntelFeedUpdated` records, and the answer besides whether anything changed.
  const summary: EventData<'IntelFeedUpdated'> = {
    feed: u.feed,
    kind: u.kind,
    version: u.version,
    added: added.length,
    removed: removed.length,
    expired,
    total,
    unsupported: u.set.unsupported.slice(0, UNSUPPORTED_LISTED).map((x) => ({ ...x })),
    unsupportedCount: u.set.unsupported.length,
  };
  const { kind: _kind, feed, version, ...counts } = summary;
  const changed = added.length > 0 || removed.length > 0 || intel.feeds.get(u.feed)?.version !== u.version;
  const result: FeedUpdateResult = { feed, version, changed, ...counts };
  if (!changed) return accept([], { ...result, addedIndicators: [] });
  const events: DomainEvent[] = [];
  for (let i = 0; i < Math.max(added.length, removed.length); i += INDICATORS_PER_RECORD) {
    const data: EventData<'IntelIndicatorsChanged'> = {
      feed: u.feed,
      version: u.version,
      added: added.slice(i, i + INDICATORS_PER_RECORD) as EventData<'IntelIndicatorsChanged'>['added'],
      removed: removed.slice(i, i + INDICATORS_PER_RECORD),
    };
    events.push({ type: 'IntelIndicatorsChanged', data });
  }
  events.push({ type: 'IntelFeedUpdated', data: summary });
  return accept(events, { ...result, addedIndicators: added });
}
