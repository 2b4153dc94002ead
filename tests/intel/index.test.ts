import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BlockList } from 'node:net';
import fc from 'fast-check';
import type { NormalizedEvent } from '../../src/events/normalized-event.js';
import { NORMALIZERS } from '../../src/normalizers/registry.js';
import { type Observable, observablesOf } from '../../src/detection/intel/event-fields.js';
import {
  createIndicatorIndex,
  type FeedMatch,
  type FeedMeta,
  MAX_MATCHES,
} from '../../src/detection/intel/indicator-index.js';
import type { Indicator, IndicatorTerm, IndicatorType } from '../../src/detection/intel/types.js';
import { zeek } from './event-fields-fixtures.js';

const FEED: FeedMeta = { feed: 'apt1', version: 'v1' };
const T = Date.parse('2024-06-01T00:00:00Z');

let n = 0;
const ind = (terms: Array<[IndicatorType, string]>, extra: Partial<Indicator> = {}): Indicator => ({
  id: `indicator--${++n}`,
  anyOf: [terms.map(([type, value]) => ({ type, value }))],
  source: terms.map(([t, v]) => `[${t} = '${v}']`).join(' AND '),
  ...extra,
});
const one = (type: IndicatorType, value: string, extra: Partial<Indicator> = {}): Indicator =>
  ind([[type, value]], extra);

const indexOf = (indicators: Indicator[], meta: FeedMeta = FEED) => {
  const index = createIndicatorIndex();
  index.add(indicators, meta);
  return index;
};
const ids = (matches: FeedMatch[]) => matches.map((m) => `${m.feed}/${m.indicator.id}`).sort();

const conn = (orig: string, resp: string): NormalizedEvent => {
  const r = NORMALIZERS.get('network-monitor')!.normalize(
    {
      ts: 1717200000,
      uid: 'Cx',
      'id.orig_h': orig,
      'id.orig_p': 5000,
      'id.resp_h': resp,
      'id.resp_p': 443,
      proto: 'tcp',
    },
    { ingestedAt: '2024-06-01T00:00:00Z', logType: 'conn' },
  );
  assert.ok(r.ok);
  return r.events[0]!;
};

describe('the indicator index, kind by kind on real Zeek events', () => {
  const files = zeek('files', (r) => r['filename'] === 'PSEXESVC.exe')[0]!;
  const dns = zeek('dns', (r) => r['query'] === 'testmyids.com' && Array.isArray(r['answers']))[0]!;
  const http = zeek('http', (r) => r['host'] === 'download.microsoft.com')[0]!;
  const smtp = zeek('smtp', (r) => r['mailfrom'] === 'gurpartap@patriots.in')[0]!;

  it('matches each hash kind and says the field', () => {
    const md5 = one('md5', '75b55bb34dac9d02740b9ad6b6820360');
    const sha1 = one('sha1', 'a17c21b909c56d93d978014e63fb06926eaea8e7');
    const sha256 = one('sha256', '141b2190f51397dbd0dfde0e3904b264c91b6f81febc823ff0c33da980b69944');
    const other = one('md5', '00000000000000000000000000000000');
    const got = indexOf([md5, sha1, sha256, other]).match(files, T);
    assert.deepEqual(ids(got), ids([md5, sha1, sha256].map((i) => ({ feed: 'apt1', indicator: i }) as FeedMatch)));
    const m = got.find((x) => x.indicator === sha256)!;
    assert.deepEqual(m.fields, [{ field: 'sha256', value: sha256.anyOf[0]![0]!.value, term: sha256.anyOf[0]![0] }]);
    assert.equal(m.feed, 'apt1');
    assert.equal(m.version, 'v1');
  });

  it('matches a queried domain, an answer address, a URL and an e-mail address', () => {
    const domain = one('domain', 'testmyids.com');
    const answer = one('ipv4', '31.3.245.133');
    const url = one(
      'url',
      'http://download.microsoft.com/download/d/e/5/de5351d6-4463-4cc3-a27c-3e2274263c43/wfetch.exe',
    );
    const email = one('email', 'raj_deol2002in@yahoo.co.in');
    const index = indexOf([domain, answer, url, email]);
    assert.deepEqual(
      index
        .match(dns, T)
        .map((m) => [m.indicator.id, m.fields[0]!.field])
        .sort(),
      [
        [domain.id, 'query'],
        [answer.id, 'answers'],
      ].sort(),
    );
    assert.deepEqual(
      index.match(http, T).map((m) => m.indicator.id),
      [url.id],
    );
    assert.deepEqual(
      index.match(smtp, T).map((m) => m.fields[0]!.field),
      ['rcptto'],
    );
  });

  it('matches IPv6 addresses in their canonical text', () => {
    const v6 = one('ipv6', '2001:db8::1');
    assert.equal(indexOf([v6]).match(conn('2001:DB8:0::0:1', '10.0.0.1'), T).length, 1);
  });
});

describe('CIDR ranges', () => {
  it('matches every range that covers an address, longest first', () => {
    const wide = one('cidr', '10.0.0.0/8');
    const narrow = one('cidr', '10.1.0.0/16');
    const elsewhere = one('cidr', '10.2.0.0/16');
    const got = indexOf([wide, narrow, elsewhere]).match(conn('10.1.2.3', '192.0.2.1'), T);
    assert.deepEqual(
      got.map((m) => m.indicator.id),
      [narrow.id, wide.id],
    );
    assert.equal(got[0]!.fields[0]!.field, 'id.orig_h');
  });

  it('takes /0 as every address of its family and /32 or /128 as one', () => {
    const all4 = one('cidr', '0.0.0.0/0');
    const host4 = one('cidr', '192.0.2.7/32');
    const all6 = one('cidr', '::/0');
    const host6 = one('cidr', '2001:db8::7/128');
    const index = indexOf([all4, host4, all6, host6]);
    assert.deepEqual(ids(index.match(conn('192.0.2.7', '192.0.2.8'), T)), ids([all4, host4].map(asMatch)));
    assert.deepEqual(ids(index.match(conn('2001:db8::7', '2001:db8::8'), T)), ids([all6, host6].map(asMatch)));
    assert.deepEqual(ids(index.match(conn('2001:db8::8', '192.0.2.8'), T)), ids([all4, all6].map(asMatch)));
  });

  it('reads an IPv4-mapped IPv6 address as IPv4, and a mapped range as the IPv4 range it maps', () => {
    const v4 = one('cidr', '198.51.100.0/24');
    const mapped = one('cidr', '::ffff:203.0.113.0/120');
    const all6 = one('cidr', '::/0');
    const index = indexOf([v4, mapped, all6]);
    assert.deepEqual(ids(index.match(conn('::ffff:198.51.100.9', '10.9.9.9'), T)), ids([v4].map(asMatch)));
    assert.deepEqual(ids(index.match(conn('203.0.113.4', '10.9.9.9'), T)), ids([mapped].map(asMatch)));
  });

  it('ranges cut within a hex digit of IPv6 cover exactly their addresses', () => {
    const r = one('cidr', '2001:db8:8000::/33');
    const index = indexOf([r]);
    assert.equal(index.match(conn('2001:db8:ffff::1', '10.0.0.1'), T).length, 1);
    assert.equal(index.match(conn('2001:db8:7fff::1', '10.0.0.1'), T).length, 0);
  });
});

const asMatch = (indicator: Indicator) => ({ feed: FEED.feed, indicator }) as FeedMatch;

describe('domains', () => {
  const query = (name: string): NormalizedEvent => {
    const r = NORMALIZERS.get('network-monitor')!.normalize(
      {
        ts: 1717200000,
        uid: 'Cd',
        'id.orig_h': '10.0.0.2',
        'id.orig_p': 5353,
        'id.resp_h': '10.0.0.1',
        'id.resp_p': 53,
        query: name,
      },
      { ingestedAt: '2024-06-01T00:00:00Z', logType: 'dns' },
    );
    assert.ok(r.ok);
    return r.events[0]!;
  };

  it('matches a subdomain to its listed parent, walking up to the last two labels', () => {
    const parent = one('domain', 'evil.com');
    const tld = one('domain', 'com');
    const index = indexOf([parent, tld]);
    assert.deepEqual(
      index.match(query('a.b.Evil.com.'), T).map((m) => m.indicator.id),
      [parent.id],
    );
    assert.equal(index.match(query('a.b.Evil.com.'), T)[0]!.fields[0]!.value, 'a.b.evil.com');
    assert.deepEqual(index.match(query('notevil.com'), T), []);
    assert.deepEqual(
      index.match(query('com'), T).map((m) => m.indicator.id),
      [tld.id],
    );
  });

  it('does not match a listed subdomain to its parent', () => {
    assert.deepEqual(indexOf([one('domain', 'a.evil.com')]).match(query('evil.com'), T), []);
  });
});

describe("validity at the event's time", () => {
  const event = conn('192.0.2.1', '192.0.2.2');
  it('holds from validFrom inclusive until validUntil exclusive', () => {
    const i = one('ipv4', '192.0.2.1', { validFrom: '2024-06-01T00:00:00Z', validUntil: '2024-06-02T00:00:00Z' });
    const index = indexOf([i]);
    assert.equal(index.match(event, T - 1).length, 0);
    assert.equal(index.match(event, T).length, 1);
    assert.equal(index.match(event, Date.parse('2024-06-02T00:00:00Z') - 1).length, 1);
    assert.equal(index.match(event, Date.parse('2024-06-02T00:00:00Z')).length, 0);
  });

  it('never matches a revoked indicator, nor one whose dates cannot be read', () => {
    const revoked = one('ipv4', '192.0.2.1', { revoked: true });
    const unreadable = one('ipv4', '192.0.2.1', { validFrom: 'yesterday' });
    assert.deepEqual(indexOf([revoked, unreadable]).match(event, T), []);
  });
});

describe('conjunctions, feeds, removal and bounds', () => {
  const files = zeek('files', (r) => r['filename'] === 'PSEXESVC.exe')[0]!;

  it('matches a conjunction only when every term holds on the event, naming each field', () => {
    const both = ind([
      ['md5', '75b55bb34dac9d02740b9ad6b6820360'],
      ['cidr', '192.168.10.0/24'],
    ]);
    const notBoth = ind([
      ['md5', '75b55bb34dac9d02740b9ad6b6820360'],
      ['ipv4', '8.8.8.8'],
    ]);
    const got = indexOf([both, notBoth]).match(files, T);
    assert.deepEqual(
      got.map((m) => m.indicator.id),
      [both.id],
    );
    assert.deepEqual(
      got[0]!.fields.map((f) => f.field),
      ['md5', 'id.orig_h'],
    );
  });

  it('reports an indicator of several alternatives once, with the alternative that held', () => {
    const i: Indicator = {
      id: 'indicator--alt',
      anyOf: [
        [{ type: 'ipv4', value: '8.8.8.8' }],
        [{ type: 'ipv4', value: '192.168.10.31' }],
        [{ type: 'ipv4', value: '192.168.10.30' }],
      ],
      source: "[ipv4-addr:value IN ('8.8.8.8', '192.168.10.31', '192.168.10.30')]",
    };
    const got = indexOf([i]).match(files, T);
    assert.equal(got.length, 1);
    assert.deepEqual(got[0]!.terms, [{ type: 'ipv4', value: '192.168.10.31' }]);
  });

  it('matches the same indicator id from two feeds twice, once per feed', () => {
    const i = one('md5', '75b55bb34dac9d02740b9ad6b6820360');
    const index = indexOf([i]);
    index.add([i], { feed: 'misp', version: '42' });
    assert.deepEqual(
      index
        .match(files, T)
        .map((m) => `${m.feed}@${m.version}`)
        .sort(),
      ['apt1@v1', 'misp@42'],
    );
    index.remove([i.id], 'misp');
    assert.deepEqual(
      index.match(files, T).map((m) => m.feed),
      ['apt1'],
    );
    assert.equal(index.size, 1);
    index.remove([i.id]);
    assert.equal(index.size, 0);
    assert.deepEqual(index.match(files, T), []);
  });

  it('replaces an indicator a feed sends again under the same id', () => {
    const index = indexOf([{ ...one('ipv4', '192.168.10.31'), id: 'x' }]);
    index.add([{ ...one('ipv4', '8.8.8.8'), id: 'x' }], { feed: 'apt1', version: 'v2' });
    assert.equal(index.size, 1);
    assert.deepEqual(index.match(files, T), []);
  });

  it(`returns at most ${MAX_MATCHES} matches for one event`, () => {
    const many = Array.from({ length: 100 }, () => one('cidr', '192.168.0.0/16'));
    assert.equal(indexOf(many).match(files, T).length, MAX_MATCHES);
  });
});

// ---- The key property: the index answers what a scan of every indicator answers. ----

const V4 = ['10.0.0.1', '10.0.0.2', '10.0.1.1', '10.1.0.1', '192.0.2.1', '192.0.2.200'];
const V6 = ['2001:db8::1', '2001:db8::2', '2001:db8:1::1', '2001:db9::1', 'fe80::1'];
const NAMES = ['evil.com', 'a.evil.com', 'b.a.evil.com', 'com', 'good.org', 'a.good.org'];
const MD5 = ['0123456789abcdef0123456789abcdef', 'fedcba9876543210fedcba9876543210'];
const EMAILS = ['x@evil.com', 'y@good.org'];
const URLS = ['http://evil.com/a', 'http://a.evil.com/b?c=1'];

const arbTerm: fc.Arbitrary<IndicatorTerm> = fc.oneof(
  fc.constantFrom(...V4).map((value) => ({ type: 'ipv4' as const, value })),
  fc.constantFrom(...V6).map((value) => ({ type: 'ipv6' as const, value })),
  fc.tuple(fc.constantFrom(...V4), fc.constantFrom(0, 1, 8, 15, 16, 23, 24, 31, 32)).map(([a, p]) => ({
    type: 'cidr' as const,
    value: `${network4(a, p)}/${p}`,
  })),
  fc.tuple(fc.constantFrom(...V6), fc.constantFrom(0, 16, 31, 32, 33, 47, 48, 127, 128)).map(([a, p]) => ({
    type: 'cidr' as const,
    value: `${network6(a, p)}/${p}`,
  })),
  fc.constantFrom(...NAMES).map((value) => ({ type: 'domain' as const, value })),
  fc.constantFrom(...MD5).map((value) => ({ type: 'md5' as const, value })),
  fc.constantFrom(...EMAILS).map((value) => ({ type: 'email' as const, value })),
  fc.constantFrom(...URLS).map((value) => ({ type: 'url' as const, value })),
);

function network4(address: string, prefix: number): string {
  const bits = address.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
  const net = prefix === 0 ? 0 : Math.floor(bits / 2 ** (32 - prefix)) * 2 ** (32 - prefix);
  return [24, 16, 8, 0].map((s) => Math.floor(net / 2 ** s) % 256).join('.');
}
function network6(address: string, prefix: number): string {
  const full = new URL(`http://[${address}]`).hostname.slice(1, -1);
  const [l = '', r = ''] = full.split('::');
  const left = l ? l.split(':') : [];
  const right = r ? r.split(':') : [];
  const groups = full.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left;
  let big = groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
  big = prefix === 0 ? 0n : (big >> BigInt(128 - prefix)) << BigInt(128 - prefix);
  const out = Array.from({ length: 8 }, (_, i) => ((big >> BigInt(112 - 16 * i)) & 0xffffn).toString(16));
  return new URL(`http://[${out.join(':')}]`).hostname.slice(1, -1);
}

const ISO = (ms: number) => new Date(ms).toISOString();
const arbIndicator: fc.Arbitrary<Indicator> = fc
  .record({
    id: fc.constantFrom('i1', 'i2', 'i3', 'i4', 'i5', 'i6', 'i7', 'i8'),
    anyOf: fc.array(fc.array(arbTerm, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 3 }),
    from: fc.option(fc.integer({ min: -3, max: 3 }), { nil: undefined }),
    until: fc.option(fc.integer({ min: -3, max: 3 }), { nil: undefined }),
    revoked: fc.option(fc.boolean(), { nil: undefined }),
  })
  .map(({ id, anyOf, from, until, revoked }) => ({
    id,
    anyOf,
    ...(from === undefined ? {} : { validFrom: ISO(T + from * 1000) }),
    ...(until === undefined ? {} : { validUntil: ISO(T + until * 1000) }),
    ...(revoked === undefined ? {} : { revoked }),
    source: 'generated',
  }));

/** A Zeek record of one of five logs whose values come from the pools, normalized by the real normalizer. */
const arbEvent: fc.Arbitrary<NormalizedEvent> = fc
  .record({
    log: fc.constantFrom('conn', 'dns', 'http', 'files', 'smtp'),
    orig: fc.constantFrom(...V4, ...V6, '::ffff:10.0.0.1'),
    resp: fc.constantFrom(...V4, ...V6),
    name: fc.constantFrom(...NAMES, 'x.b.a.evil.com', 'other.net', 'EVIL.com.'),
    answers: fc.subarray([...V4, ...V6, ...NAMES]),
    md5: fc.constantFrom(...MD5, 'FEDCBA9876543210FEDCBA9876543210'),
    mail: fc.constantFrom(...EMAILS, 'Someone <X@Evil.com>'),
    uri: fc.constantFrom('/a', '/b?c=1', '/zzz'),
  })
  .map((g) => {
    const base = {
      ts: 1717200000,
      uid: 'Cp',
      'id.orig_h': g.orig,
      'id.orig_p': 1,
      'id.resp_h': g.resp,
      'id.resp_p': 2,
    };
    const extra: Record<string, Record<string, unknown>> = {
      conn: { proto: 'tcp' },
      dns: { query: g.name, answers: g.answers },
      http: { host: g.name, uri: g.uri },
      files: { fuid: 'F1', md5: g.md5 },
      smtp: { mailfrom: g.mail, rcptto: [g.mail] },
    };
    const r = NORMALIZERS.get('network-monitor')!.normalize(
      { ...base, ...extra[g.log] },
      { ingestedAt: '2024-06-01T00:00:00Z', logType: g.log },
    );
    assert.ok(r.ok);
    return r.events[0]!;
  });

/** Whether an observable holds a term, written apart from the index: node's BlockList for ranges. */
function holds(term: IndicatorTerm, o: Observable): boolean {
  if (term.type === 'cidr') {
    const [net, prefix] = term.value.split('/') as [string, string];
    const family = net.includes(':') ? 'ipv6' : 'ipv4';
    if (o.type !== family) return false;
    const list = new BlockList();
    list.addSubnet(net, Number(prefix), family);
    return list.check(o.value, family);
  }
  if (term.type !== o.type) return false;
  if (term.type === 'domain')
    return o.value === term.value || (term.value.includes('.') && o.value.endsWith(`.${term.value}`));
  return o.value === term.value;
}

/** The brute force: every indicator of every feed, every alternative, every term against every observable. */
function scan(feeds: Map<string, Map<string, Indicator>>, event: NormalizedEvent, at: number): string[] {
  const observables = observablesOf(event);
  const out: string[] = [];
  for (const [feed, indicators] of feeds) {
    for (const i of indicators.values()) {
      if (i.revoked) continue;
      if (i.validFrom !== undefined && at < Date.parse(i.validFrom)) continue;
      if (i.validUntil !== undefined && at >= Date.parse(i.validUntil)) continue;
      if (i.anyOf.some((terms) => terms.every((t) => observables.some((o) => holds(t, o)))))
        out.push(`${feed}/${i.id}`);
    }
  }
  return out.sort();
}

function checkFields(matches: FeedMatch[]): void {
  for (const m of matches) {
    assert.ok(m.indicator.anyOf.includes(m.terms));
    assert.equal(m.fields.length, m.terms.length);
    for (const f of m.fields)
      assert.ok(
        holds(f.term, {
          field: f.field,
          type: f.term.type === 'cidr' ? (f.value.includes(':') ? 'ipv6' : 'ipv4') : f.term.type,
          value: f.value,
        }),
      );
  }
}

const feedsOf = (batches: Array<[string, Indicator[]]>) => {
  const feeds = new Map<string, Map<string, Indicator>>();
  for (const [feed, list] of batches) {
    const m = feeds.get(feed) ?? new Map<string, Indicator>();
    for (const i of list) m.set(i.id, i);
    feeds.set(feed, m);
  }
  return feeds;
};

describe('the index against a brute-force scan', () => {
  it('answers exactly what a scan of every indicator answers, for random indicators and events', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom('f1', 'f2'), fc.array(arbIndicator, { maxLength: 10 })), { maxLength: 3 }),
        fc.array(arbEvent, { minLength: 1, maxLength: 4 }),
        fc.integer({ min: -4, max: 4 }),
        (batches, events, dt) => {
          const index = createIndicatorIndex();
          for (const [feed, list] of batches) index.add(list, { feed, version: 'v' });
          const feeds = feedsOf(batches);
          assert.equal(
            index.size,
            [...feeds.values()].reduce((s, m) => s + m.size, 0),
          );
          for (const event of events) {
            const got = index.match(event, T + dt * 1000);
            assert.deepEqual(ids(got), scan(feeds, event, T + dt * 1000));
            checkFields(got);
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it('answers after any adds and removes what an index built from the survivors answers', () => {
    const op = fc.oneof(
      fc.record({ add: fc.array(arbIndicator, { maxLength: 6 }), feed: fc.constantFrom('f1', 'f2') }),
      fc.record({
        remove: fc.subarray(['i1', 'i2', 'i3', 'i4', 'i5', 'i6', 'i7', 'i8']),
        feed: fc.option(fc.constantFrom('f1', 'f2'), { nil: undefined }),
      }),
    );
    fc.assert(
      fc.property(
        fc.array(op, { maxLength: 12 }),
        fc.array(arbEvent, { minLength: 1, maxLength: 3 }),
        (ops, events) => {
          const index = createIndicatorIndex();
          const model = new Map<string, Map<string, Indicator>>();
          for (const o of ops) {
            if ('add' in o) {
              index.add(o.add, { feed: o.feed, version: 'v' });
              const m = model.get(o.feed) ?? new Map<string, Indicator>();
              for (const i of o.add) m.set(i.id, i);
              model.set(o.feed, m);
            } else {
              index.remove(o.remove, o.feed);
              for (const [feed, m] of model)
                if (o.feed === undefined || o.feed === feed) for (const id of o.remove) m.delete(id);
            }
          }
          const fresh = createIndicatorIndex();
          for (const [feed, m] of model) fresh.add(m.values(), { feed, version: 'v' });
          assert.equal(index.size, fresh.size);
          for (const event of events) {
            for (const dt of [-2, 0, 2])
              assert.deepEqual(ids(index.match(event, T + dt * 1000)), ids(fresh.match(event, T + dt * 1000)));
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
