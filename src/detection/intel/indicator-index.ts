import type { NormalizedEvent } from '../../events/normalized-event.js';
import { type Observable, observablesOf } from './event-fields.js';
import { eventIp, ipv6Groups } from './event-values.js';
import type { Indicator, IndicatorMatch, IndicatorTerm } from './types.js';

/**
 * The active indicators of every feed, indexed for matching events (issue 60): a hash map per kind from the
 * normalized value to the indicators naming it (ipv4, ipv6, domain, url, md5, sha1, sha256, email), and for CIDR
 * ranges a hash map per prefix length and family from the masked network to its ranges, so an address is looked
 * up once per prefix length in use (at most 33 for IPv4, 129 for IPv6; a few dozen in real feeds) and finds every
 * range that covers it, longest first. An indicator of several terms that must hold together is indexed by one of
 * them and its others are checked on the same event. Pure: no I/O, no clock (the event's time is passed in).
 */

/** The feed an indicator came from and the version of the feed that carried it, named by every match. */
export interface FeedMeta {
  readonly feed: string;
  readonly version: string;
}

/** A match as the index answers it: the indicator, what matched where, and the feed and version that said so. */
export interface FeedMatch extends IndicatorMatch {
  readonly feed: string;
  readonly version: string;
}

/** The most matches one event yields; past it the rest are not reported (the alert says the first ones). */
export const MAX_MATCHES = 32;
/** The most indicator references examined for one event (expired, revoked or unmet ones included). */
export const MAX_CANDIDATES = 4096;

interface Entry {
  readonly indicator: Indicator;
  readonly meta: FeedMeta;
  /** validFrom and validUntil in epoch ms; an unreadable date is NaN, which no time is within. */
  readonly from: number;
  readonly until: number;
}
/** An alternative of an indicator of several: the entry itself stands for alternative 0 of a one-alternative one. */
interface AltRef {
  readonly entry: Entry;
  readonly alt: number;
}
type Ref = Entry | AltRef;
type Bucket = Ref | Ref[];

const EXACT_TYPES = ['ipv4', 'ipv6', 'domain', 'url', 'md5', 'sha1', 'sha256', 'email'] as const;
type ExactType = (typeof EXACT_TYPES)[number];

/** The indicator index: add a feed's indicators, remove them by id, match an event at its time. */
export interface IndicatorIndex {
  /** Adds indicators (already normalized) of one feed; one whose id that feed already has replaces it. */
  add(indicators: Iterable<Indicator>, meta: FeedMeta): void;
  /** Removes indicators by id: of `feed` only, or of every feed when none is named. */
  remove(ids: Iterable<string>, feed?: string): void;
  /** How many indicators are held (the same id from two feeds counts twice). */
  readonly size: number;
  /** The indicators the event's fields match at `atMs` (the event's time), at most MAX_MATCHES, one per feed's id. */
  match(event: NormalizedEvent, atMs: number): FeedMatch[];
}

const entryOf = (ref: Ref): Entry => ('alt' in ref ? ref.entry : ref);

function put<K>(map: Map<K, Bucket>, key: K, ref: Ref): void {
  const bucket = map.get(key);
  if (bucket === undefined) map.set(key, ref);
  else if (Array.isArray(bucket)) bucket.push(ref);
  else map.set(key, [bucket, ref]);
}

function drop<K>(map: Map<K, Bucket>, key: K, entry: Entry): void {
  const bucket = map.get(key);
  if (bucket === undefined) return;
  const rest = (Array.isArray(bucket) ? bucket : [bucket]).filter((r) => entryOf(r) !== entry);
  if (rest.length === 0) map.delete(key);
  else map.set(key, rest.length === 1 ? rest[0]! : rest);
}

/** An IPv4 address's 32 bits, from dotted decimal that eventIp accepted. */
function ipv4Bits(text: string): number {
  const [a, b, c, d] = text.split('.').map(Number) as [number, number, number, number];
  return ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;
}

const mask4 = (prefix: number): number => (prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0);

/** An IPv6 address as 32 hex digits, from RFC 5952 text that eventIp produced. */
function ipv6Hex(text: string): string {
  return ipv6Groups(text)!
    .map((g) => g.toString(16).padStart(4, '0'))
    .join('');
}

/** The first `prefix` bits of 32 hex digits, as hex digits (the last one masked): a network's key. */
function hexPrefix(hex: string, prefix: number): string {
  const whole = prefix >> 2;
  const bits = prefix & 3;
  if (bits === 0) return hex.slice(0, whole);
  return hex.slice(0, whole) + (parseInt(hex[whole]!, 16) & ((0xf << (4 - bits)) & 0xf)).toString(16);
}

/** A CIDR range of either family; an IPv4-mapped IPv6 range of /96 or longer is the IPv4 range it maps. */
export type ParsedCidr =
  | { readonly family: 'ipv4'; readonly prefix: number; readonly key: number }
  | { readonly family: 'ipv6'; readonly prefix: number; readonly key: string };

/** Parses `a.b.c.d/n` or `v6::/n` (host bits cleared here too); undefined when it is not a range. */
export function parseRange(value: string): ParsedCidr | undefined {
  const slash = value.indexOf('/');
  if (slash < 0 || !/^\d{1,3}$/.test(value.slice(slash + 1))) return undefined;
  let prefix = Number(value.slice(slash + 1));
  const text = value.slice(0, slash);
  const address = eventIp(text);
  if (address === undefined || text.includes('%') || text.startsWith('[')) return undefined;
  if (address.type === 'ipv4') {
    // `::ffff:1.2.3.0/120` names IPv4 addresses, which events carry as IPv4 (event-values.ts).
    if (text.includes(':')) {
      if (prefix < 96 || prefix > 128) return undefined;
      prefix -= 96;
    }
    if (prefix > 32) return undefined;
    return { family: 'ipv4', prefix, key: (ipv4Bits(address.value) & mask4(prefix)) >>> 0 };
  }
  if (prefix > 128) return undefined;
  return { family: 'ipv6', prefix, key: hexPrefix(ipv6Hex(address.value), prefix) };
}

/** Whether an observable holds a term's value (a conjunction's other terms; the brute force in tests is apart). */
function covers(term: IndicatorTerm, o: Observable): boolean {
  if (term.type === 'cidr') {
    const range = parseRange(term.value);
    if (range === undefined || range.family !== o.type) return false;
    return range.family === 'ipv4'
      ? (ipv4Bits(o.value) & mask4(range.prefix)) >>> 0 === range.key
      : hexPrefix(ipv6Hex(o.value), range.prefix) === range.key;
  }
  if (term.type !== o.type) return false;
  if (o.value === term.value) return true;
  // A subdomain matches its listed parent, up to the last two labels (domainsUp).
  return term.type === 'domain' && term.value.includes('.') && o.value.endsWith(`.${term.value}`);
}

/** A domain and its parents, up to the last two labels: `a.b.evil.com`, `b.evil.com`, `evil.com`. */
function domainsUp(name: string): string[] {
  const out = [name];
  let rest = name;
  for (;;) {
    const dot = rest.indexOf('.');
    const parent = rest.slice(dot + 1);
    if (dot < 0 || !parent.includes('.')) return out;
    out.push(parent);
    rest = parent;
  }
}

/** The term an alternative is indexed by: the first that is not a range (an exact lookup), else the first. */
function anchorOf(terms: ReadonlyArray<IndicatorTerm>): IndicatorTerm | undefined {
  return terms.find((t) => t.type !== 'cidr') ?? terms[0];
}

const timeOf = (iso: string | undefined, absent: number): number => (iso === undefined ? absent : Date.parse(iso));

/** Creates an empty index. */
export function createIndicatorIndex(): IndicatorIndex {
  const exact = new Map<ExactType, Map<string, Bucket>>(EXACT_TYPES.map((t) => [t, new Map()]));
  const ranges4 = new Map<number, Map<number, Bucket>>();
  const ranges6 = new Map<number, Map<string, Bucket>>();
  /** Prefix lengths in use, longest first. */
  let prefixes4: number[] = [];
  let prefixes6: number[] = [];
  const byFeed = new Map<string, Map<string, Entry>>();
  let size = 0;

  const sortedKeys = (m: Map<number, unknown>): number[] => [...m.keys()].sort((a, b) => b - a);

  /** Calls `f` with the table and key an alternative is (or would be) indexed under; nothing when it cannot match. */
  function place(terms: ReadonlyArray<IndicatorTerm>, f: (map: Map<unknown, Bucket>, key: unknown) => void): void {
    const anchor = anchorOf(terms);
    if (anchor === undefined) return;
    if (anchor.type !== 'cidr') return f(exact.get(anchor.type)! as Map<unknown, Bucket>, anchor.value);
    const range = parseRange(anchor.value);
    if (range === undefined) return;
    const tables = (range.family === 'ipv4' ? ranges4 : ranges6) as Map<number, Map<unknown, Bucket>>;
    const before = tables.size;
    let table = tables.get(range.prefix);
    if (table === undefined) {
      table = new Map();
      tables.set(range.prefix, table);
    }
    f(table, range.key);
    if (table.size === 0) tables.delete(range.prefix);
    if (tables.size !== before) {
      prefixes4 = sortedKeys(ranges4);
      prefixes6 = sortedKeys(ranges6);
    }
  }

  function unindex(entry: Entry): void {
    entry.indicator.anyOf.forEach((terms) => place(terms, (map, key) => drop(map, key, entry)));
    size--;
  }

  function add(indicators: Iterable<Indicator>, meta: FeedMeta): void {
    let feed = byFeed.get(meta.feed);
    if (feed === undefined) {
      feed = new Map();
      byFeed.set(meta.feed, feed);
    }
    for (const indicator of indicators) {
      const old = feed.get(indicator.id);
      if (old !== undefined) unindex(old);
      const entry: Entry = {
        indicator,
        meta,
        from: timeOf(indicator.validFrom, -Infinity),
        until: timeOf(indicator.validUntil, Infinity),
      };
      feed.set(indicator.id, entry);
      size++;
      const single = indicator.anyOf.length === 1;
      indicator.anyOf.forEach((terms, alt) =>
        place(terms, (map, key) => put(map, key, single ? entry : { entry, alt })),
      );
    }
  }

  function remove(ids: Iterable<string>, feedName?: string): void {
    const feeds = feedName === undefined ? [...byFeed.values()] : [byFeed.get(feedName)].filter((f) => f !== undefined);
    for (const id of ids) {
      for (const feed of feeds) {
        const entry = feed.get(id);
        if (entry === undefined) continue;
        unindex(entry);
        feed.delete(id);
      }
    }
  }

  function match(event: NormalizedEvent, atMs: number): FeedMatch[] {
    const observables = observablesOf(event);
    const out: FeedMatch[] = [];
    const matched = new Set<Entry>();
    let budget = MAX_CANDIDATES;
    const consider = (ref: Ref, found: Observable): void => {
      if (out.length >= MAX_MATCHES || budget-- <= 0) return;
      const entry = entryOf(ref);
      const { indicator } = entry;
      if (matched.has(entry) || indicator.revoked === true || !(entry.from <= atMs && atMs < entry.until)) return;
      const terms = indicator.anyOf['alt' in ref ? ref.alt : 0]!;
      const fields: Array<FeedMatch['fields'][number]> = [];
      for (const term of terms) {
        const o = terms.length === 1 ? found : observables.find((x) => covers(term, x));
        if (o === undefined) return;
        fields.push({ field: o.field, value: o.value, term });
      }
      matched.add(entry);
      out.push({ indicator, terms, fields, feed: entry.meta.feed, version: entry.meta.version });
    };
    const each = (bucket: Bucket | undefined, found: Observable): void => {
      if (bucket === undefined) return;
      if (Array.isArray(bucket)) for (const ref of bucket) consider(ref, found);
      else consider(bucket, found);
    };
    for (const o of observables) {
      if (out.length >= MAX_MATCHES || budget <= 0) break;
      const table = exact.get(o.type as ExactType);
      if (table === undefined) continue;
      if (o.type === 'domain') for (const name of domainsUp(o.value)) each(table.get(name), o);
      else each(table.get(o.value), o);
      if (o.type === 'ipv4' && prefixes4.length > 0) {
        const bits = ipv4Bits(o.value);
        for (const p of prefixes4) each(ranges4.get(p)!.get((bits & mask4(p)) >>> 0), o);
      } else if (o.type === 'ipv6' && prefixes6.length > 0) {
        const hex = ipv6Hex(o.value);
        for (const p of prefixes6) each(ranges6.get(p)!.get(hexPrefix(hex, p)), o);
      }
    }
    return out;
  }

  return {
    add,
    remove,
    get size() {
      return size;
    },
    match,
  };
}
