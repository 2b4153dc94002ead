import type { Limits } from '../services/config-schema.js';
import type { RefusalReason } from '../events/record-types.js';

/** Source addresses whose failed-authentication bucket is tracked at once; the fullest are forgotten first. */
const MAX_BUCKETS = 100_000;
/** Distinct (reason, address) counters per interval; more share the address `*`. */
const MAX_COUNTERS = 10_000;
const MAX_ROUTES = 10;

/** The counted refusals of one (reason, address) in one interval. */
export interface RefusalCount {
  readonly reason: RefusalReason;
  readonly status: number;
  readonly sourceAddress: string;
  readonly count: number;
  readonly firstAt: string;
  readonly lastAt: string;
  readonly routes: readonly string[];
}

/**
 * Failed authentication throttled and refusals counted, per source address:
 * - a token bucket per address (`limits.authFailures`): each failed authentication takes a token;
 *   while the bucket is empty the address is throttled (429 with Retry-After) whatever it sends;
 * - every refusal is counted per (reason, address) and interval (`limits.refusalSummarySeconds`);
 *   `drain` hands over the counts of closed intervals, to be logged as one summary record each.
 * Memory is bounded: at most MAX_BUCKETS buckets and MAX_COUNTERS counters.
 */
export interface RefusalLedger {
  /** Seconds until the address may try again (0: it may now). */
  throttledFor(address: string, nowMs: number): number;
  /** Notes a failed authentication; true when it is the address's first of the interval (to be logged in full). */
  failed(address: string, route: string, at: Date): boolean;
  /** Notes a request refused as throttled (429), overloaded (429) or because the disk is full (507). */
  refused(reason: 'throttled' | 'overloaded' | 'disk_full', address: string, route: string, at: Date): void;
  /** The counts of intervals closed by `now` (every count when `all`), forgotten once handed over. */
  drain(now: Date, all?: boolean): RefusalCount[];
}

interface Bucket {
  tokens: number;
  atMs: number;
}
interface Counter {
  reason: RefusalReason;
  status: number;
  address: string;
  count: number;
  firstAt: string;
  lastAt: string;
  routes: Set<string>;
}

/** A ledger for the configured limits. */
export function createRefusalLedger(limits: Pick<Limits, 'authFailures' | 'refusalSummarySeconds'>): RefusalLedger {
  const { burst, perMinute } = limits.authFailures;
  const perMs = perMinute / 60_000;
  const intervalMs = limits.refusalSummarySeconds * 1000;
  const buckets = new Map<string, Bucket>();
  let counters = new Map<string, Counter>();
  let intervalStart: number | undefined;

  const refill = (b: Bucket, nowMs: number): void => {
    b.tokens = Math.min(burst, b.tokens + Math.max(0, nowMs - b.atMs) * perMs);
    b.atMs = nowMs;
  };

  const prune = (nowMs: number): void => {
    for (const [address, b] of buckets) {
      refill(b, nowMs);
      if (b.tokens >= burst) buckets.delete(address);
    }
    // Still full of draining buckets: forget the oldest (insertion order), never the newest.
    for (const address of buckets.keys()) {
      if (buckets.size < MAX_BUCKETS) break;
      buckets.delete(address);
    }
  };

  const count = (reason: RefusalReason, status: number, address: string, route: string, at: Date): Counter => {
    intervalStart ??= at.getTime();
    let key = `${reason}|${address}`;
    if (!counters.has(key) && counters.size >= MAX_COUNTERS) {
      key = `${reason}|*`;
      address = '*';
    }
    const iso = at.toISOString();
    let c = counters.get(key);
    if (!c)
      counters.set(key, (c = { reason, status, address, count: 0, firstAt: iso, lastAt: iso, routes: new Set() }));
    c.count++;
    c.lastAt = iso;
    if (c.routes.size < MAX_ROUTES) c.routes.add(route);
    return c;
  };

  return {
    throttledFor(address, nowMs) {
      const b = buckets.get(address);
      if (!b) return 0;
      refill(b, nowMs);
      return b.tokens >= 1 ? 0 : Math.ceil((1 - b.tokens) / perMs / 1000);
    },
    failed(address, route, at) {
      const nowMs = at.getTime();
      let b = buckets.get(address);
      if (!b) {
        if (buckets.size >= MAX_BUCKETS) prune(nowMs);
        buckets.set(address, (b = { tokens: burst, atMs: nowMs }));
      }
      refill(b, nowMs);
      b.tokens = Math.max(0, b.tokens - 1);
      return count('authentication_failed', 401, address, route, at).count === 1;
    },
    refused(reason, address, route, at) {
      count(reason, reason === 'disk_full' ? 507 : 429, address, route, at);
    },
    drain(now, all = false) {
      if (intervalStart === undefined || (!all && now.getTime() < intervalStart + intervalMs)) return [];
      const closed = [...counters.values()];
      counters = new Map();
      intervalStart = undefined;
      return closed.map((c) => ({
        reason: c.reason,
        status: c.status,
        sourceAddress: c.address,
        count: c.count,
        firstAt: c.firstAt,
        lastAt: c.lastAt,
        routes: [...c.routes],
      }));
    },
  };
}
