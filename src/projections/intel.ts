import { createIndicatorIndex, type IndicatorIndex } from '../detection/intel/indicator-index.js';
import type { Indicator, UnsupportedIndicator } from '../detection/intel/types.js';
import type { EventData } from '../events/union.js';
import { exhaustive } from '../events/read.js';
import { instanceProjection } from './types.js';

/** A feed as the routes show it: its kind, version, counts and what it could not use. */
export interface FeedView {
  name: string;
  kind: EventData<'IntelFeedUpdated'>['kind'];
  version: string;
  updatedAt: string;
  total: number;
  lastChange: { added: number; removed: number; expired: number };
  unsupported: UnsupportedIndicator[];
  unsupportedCount: number;
}

/** An indicator a feed holds, with the version of the feed that carried it (a match names it). */
export interface Held {
  readonly indicator: Indicator;
  readonly version: string;
}

/**
 * Threat intelligence's read model (docs/intel.md): each feed's state and indicators, and the index the detector
 * matches events against (derived from the indicators, shared by reference: rebuilt on restore, never snapshotted).
 */
export interface IntelState {
  feeds: Map<string, FeedView>;
  /** feed -> indicator id -> the indicator as the log recorded it, and the feed's version that carried it. */
  indicators: Map<string, Map<string, Held>>;
  index: IndicatorIndex;
}

/** How many indicators all feeds hold. */
export function indicatorCount(s: IntelState): number {
  let n = 0;
  for (const m of s.indicators.values()) n += m.size;
  return n;
}

function changeIndicators(s: IntelState, d: EventData<'IntelIndicatorsChanged'>): void {
  let held = s.indicators.get(d.feed);
  if (!held) s.indicators.set(d.feed, (held = new Map()));
  if (d.removed.length > 0) {
    s.index.remove(d.removed, d.feed);
    for (const id of d.removed) held.delete(id);
  }
  if (d.added.length > 0) {
    s.index.add(d.added as Indicator[], { feed: d.feed, version: d.version });
    for (const i of d.added) held.set(i.id, { indicator: i as Indicator, version: d.version });
  }
}

/**
 * The feeds and their indicators, folded from `IntelIndicatorsChanged` (the indicators, added and removed) and
 * `IntelFeedUpdated` (each change's summary): replay gives back which indicators were active after each change.
 */
export const intelProjection = instanceProjection({
  name: 'intel',
  version: 1,
  folds: ['IntelIndicatorsChanged', 'IntelFeedUpdated'],
  initial: (): IntelState => ({ feeds: new Map(), indicators: new Map(), index: createIndicatorIndex() }),
  evolve(s, record) {
    switch (record.type) {
      case 'IntelIndicatorsChanged':
        changeIndicators(s, record.data);
        return s;
      case 'IntelFeedUpdated': {
        const d = record.data;
        s.feeds.set(d.feed, {
          name: d.feed,
          kind: d.kind,
          version: d.version,
          updatedAt: record.at,
          total: d.total,
          lastChange: { added: d.added, removed: d.removed, expired: d.expired },
          unsupported: [...d.unsupported],
          unsupportedCount: d.unsupportedCount,
        });
        return s;
      }
      default:
        return exhaustive(record, s);
    }
  },
  snapshot: (s) => ({
    feeds: [...s.feeds.values()],
    indicators: [...s.indicators].map(([feed, m]) => [feed, [...m.values()]]),
  }),
  restore(data) {
    const d = data as { feeds: FeedView[]; indicators: Array<[string, Held[]]> };
    const s: IntelState = {
      feeds: new Map(d.feeds.map((f) => [f.name, f])),
      indicators: new Map(),
      index: createIndicatorIndex(),
    };
    for (const [feed, list] of d.indicators) {
      s.indicators.set(feed, new Map(list.map((h) => [h.indicator.id, h])));
      for (const h of list) s.index.add([h.indicator], { feed, version: h.version });
    }
    return s;
  },
});
