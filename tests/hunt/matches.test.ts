import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { NormalizedEvent } from '../../src/events/normalized-event.js';
import { compileHunt, parseHunt, type HuntExpr, type HuntValue } from '../../src/detection/hunt/index.js';
import { referenceMatches } from './reference.js';

function event(parts: Partial<NormalizedEvent> & { adapter?: string }): NormalizedEvent {
  const { adapter, ...rest } = parts;
  return {
    schemaVersion: 1,
    id: 'ev-1',
    category: 'network',
    class: 'dns',
    activity: 'query',
    outcome: 'success',
    time: '2026-01-01T10:00:00Z',
    ingestedAt: '2026-01-01T10:00:01Z',
    source: { adapter: adapter ?? 'network-monitor', instance: 'dns', recordId: 'r1' },
    entityKeys: ['ip:10.0.0.5'],
    attributes: {},
    ...rest,
  };
}

function matches(query: string, e: NormalizedEvent): boolean {
  const r = parseHunt(query);
  if (!r.ok) assert.fail(r.error.message);
  return compileHunt(r.query).matches(e);
}

const dns = event({
  actor: { user: 'Alice' },
  severity: 5,
  sourceEndpoint: { ip: '10.1.2.3', port: 53001 },
  destinationEndpoint: { ip: '2001:db8::53', port: 53 },
  attributes: {
    query: 'Mail.Example.RU',
    'id.orig_h': '10.1.2.3',
    answers: ['192.0.2.1', '192.0.2.2'],
    TTLs: [60, 120],
    rcode: '0',
    flags: { rd: true },
    hops: [{ host: 'a', ms: 3 }, { host: 'b', ms: 40 }],
  },
});

describe('compileHunt: matching', () => {
  const cases: Array<[string, boolean]> = [
    ['attributes.query:*.example.ru', true],
    ['attributes.query:mail.example.ru', true],
    ['attributes.query:"*.example.ru"', false],
    ['attributes.query:example', false],
    ['example', true],
    ['"EXAMPLE.ru"', true],
    ['nothing-here', false],
    ['actor.user:alice', true],
    ['actor.user:(bob or ALICE)', true],
    ['category:network', true],
    ['category:Network', false],
    ['source.adapter:network-monitor and class:dns', true],
    ['entityKeys:"ip:10.0.0.5"', true],
    ['entityKeys:IP\\:10.0.0.5', false],
    ['severity:5', true],
    ['severity:5.0', true],
    ['severity >= 5 and severity < 6', true],
    ['severity > 5', false],
    ['attributes.rcode:0', true],
    ['attributes.TTLs:120', true],
    ['attributes.TTLs > 100', true],
    ['attributes.TTLs > 200', false],
    ['attributes.answers:192.0.2.2', true],
    ['attributes.answers:192.0.2.0/24', true],
    ['attributes.answers:"198.51.100.0/24"', false],
    ['attributes.id.orig_h:10.0.0.0/8', true],
    ['sourceEndpoint.ip:10.0.0.0/8', true],
    ['destinationEndpoint.ip:"2001:db8::/32"', true],
    ['destinationEndpoint.ip:"2001:db9::/32"', false],
    ['destinationEndpoint.port:53', true],
    ['attributes.flags.rd:true', true],
    ['attributes.flags:*', true],
    ['attributes.missing:*', false],
    ['not attributes.missing:*', true],
    ['attributes.hops:{ host:b and ms > 10 }', true],
    ['attributes.hops:{ host:a and ms > 10 }', false],
    ['attributes.hops.host:a and attributes.hops.ms > 10', true],
    ['time >= 2026-01-01 and time < "2026-01-01T10:00:01Z"', true],
    ['time > "2026-01-01T11:00:00+02:00"', true],
    ['time < "2026-01-01T09:59:59"', false],
    ['ingestedAt > time', false],
    ['attributes.*:192.0.2.1', true],
    ['*Endpoint.port:53', true],
    ['attr*.query:mail*', true],
    ['query:mail.example.ru', false],
    ['', true],
    ['*', true],
    ['not *', false],
  ];
  for (const [query, expected] of cases)
    it(`${expected ? 'matches' : 'does not match'} ${query}`, () => assert.equal(matches(query, dns), expected));
});

describe('compileHunt: index terms', () => {
  const terms = (q: string) => {
    const r = parseHunt(q);
    if (!r.ok) assert.fail(r.error.message);
    return compileHunt(r.query).indexTerms;
  };
  it('takes exact, un-negated terms of the top-level and, value lists included', () => {
    assert.deepEqual(terms('category:network and source.adapter:(zeek or linux-journal) and entityKeys:"user:alice"'), {
      category: ['network'],
      adapter: ['zeek', 'linux-journal'],
      entityKey: ['user:alice'],
    });
    assert.deepEqual(terms('class:auth and class:(auth or dns)'), { class: ['auth'] });
  });
  it('leaves out wildcards, negations, alternatives across fields and anything under or', () => {
    assert.deepEqual(terms('category:net* and not class:dns and (class:a or category:b) and actor.user:x'), {});
    assert.deepEqual(terms('category:network or x:y'), {});
  });
});

const values = (xs: string[]): fc.Arbitrary<HuntValue> =>
  fc.oneof(
    fc.constantFrom(...xs).map((t): HuntValue => ({ quoted: false, parts: [t] })),
    fc.constantFrom(...xs).map((t): HuntValue => ({ quoted: true, text: t })),
    fc.constantFrom(['', '.example.ru'], ['mail', ''], ['', 'ic', ''], ['user:', ''], ['10.', '']).map((parts): HuntValue => ({ quoted: false, parts })),
  );

const VALUES = ['network', 'Network', 'auth', 'AUTH', 'dns', 'zeek', 'linux-journal', 'user:alice', 'alice', 'ALICE', 'bob', '22', '5', '5.0', '10.0.0.0/8', '192.168.0.0/16', 'x', 'Y', 'true', 'mail.example.ru', ''];
const FIELDS = ['category', 'class', 'source.adapter', 'entityKeys', 'actor.user', 'severity', 'time', 'attributes.query', 'attributes.port', 'attributes.id.orig_h', 'attributes.tags', 'attributes.nested', 'attributes.nested.a', 'attributes.nested.b', 'attributes.missing', 'attr*', 'attributes.*a'];
const RANGE_VALUES = ['5', '22', '2026-01-01T00:00:00Z', '2026-01-02', '2026-01-01T12:30:00', 'm', 'B'];

const term: fc.Arbitrary<HuntExpr> = fc.oneof(
  fc.record({ kind: fc.constant('match' as const), field: fc.option(fc.constantFrom(...FIELDS), { nil: null }), value: values(VALUES) }),
  fc.record({ kind: fc.constant('exists' as const), field: fc.constantFrom(...FIELDS) }),
  fc.record({
    kind: fc.constant('range' as const),
    field: fc.constantFrom(...FIELDS),
    op: fc.constantFrom('<' as const, '<=' as const, '>' as const, '>=' as const),
    value: fc.constantFrom(...RANGE_VALUES).map((t): HuntValue => ({ quoted: false, parts: [t] })),
  }),
);
const innerTerm: fc.Arbitrary<HuntExpr> = fc.oneof(
  fc.record({ kind: fc.constant('match' as const), field: fc.option(fc.constantFrom('a', 'b', 'class'), { nil: null }), value: values(['x', 'X', '3', 'alice']) }),
  fc.record({ kind: fc.constant('range' as const), field: fc.constant('b'), op: fc.constantFrom('<' as const, '>=' as const), value: fc.constant({ quoted: false as const, parts: ['3'] }) }),
);

const expr: fc.Arbitrary<HuntExpr> = fc.letrec<{ e: HuntExpr }>((tie) => ({
  e: fc.oneof(
    { depthSize: 'small' },
    term,
    fc.record({ kind: fc.constantFrom('and' as const, 'or' as const), items: fc.array(tie('e'), { minLength: 2, maxLength: 3 }) }),
    fc.record({ kind: fc.constant('not' as const), item: tie('e') }),
    fc.record({ kind: fc.constant('nested' as const), field: fc.constant('attributes.nested'), query: fc.oneof(innerTerm, fc.record({ kind: fc.constant('and' as const), items: fc.array(innerTerm, { minLength: 2, maxLength: 2 }) })) }),
  ),
})).e;

const nestedValue = fc.oneof(
  fc.record({ a: fc.constantFrom('x', 'X', 'y'), b: fc.constantFrom(1, 3, 7, '3') }, { requiredKeys: ['a'] }),
  fc.array(fc.record({ a: fc.constantFrom('x', 'y'), b: fc.constantFrom(1, 3, 7) }), { maxLength: 3 }),
);

const generatedEvent: fc.Arbitrary<NormalizedEvent> = fc
  .record({
    category: fc.constantFrom('network' as const, 'identity' as const),
    class: fc.constantFrom('auth', 'Auth', 'dns'),
    adapter: fc.constantFrom('zeek', 'linux-journal'),
    entityKeys: fc.uniqueArray(fc.constantFrom('user:alice', 'host:web1', 'User:Alice'), { maxLength: 3 }),
    actor: fc.option(fc.record({ user: fc.constantFrom('alice', 'Bob', null) as fc.Arbitrary<unknown> }), { nil: undefined }),
    severity: fc.option(fc.constantFrom(0, 5, 7.5, 10), { nil: undefined }),
    time: fc.constantFrom('2025-12-31T23:00:00Z', '2026-01-01T12:30:00Z', '2026-01-02T00:00:00.5Z'),
    attributes: fc.record(
      {
        query: fc.constantFrom('mail.example.ru', 'B.Example.com', 'ALICE'),
        port: fc.constantFrom(22, '22', 80, '5.0'),
        'id.orig_h': fc.constantFrom('10.0.0.5', '192.168.1.1', 'not-an-ip'),
        tags: fc.array(fc.constantFrom('x', 'Y', 'true', 5), { maxLength: 3 }),
        nested: nestedValue,
        flag: fc.boolean(),
        m: fc.constantFrom('m', 'M', 'a', null),
      },
      { requiredKeys: [] },
    ),
  })
  .map(({ adapter, actor, severity, ...rest }) =>
    JSON.parse(JSON.stringify(event({ ...rest, adapter, ...(actor ? { actor: actor as Record<string, unknown> } : {}), ...(severity !== undefined ? { severity } : {}) }))),
  );

describe('compileHunt: against a naive reference evaluator', () => {
  it('matches exactly the events the reference matches, for generated queries and events', () =>
    fc.assert(
      fc.property(expr, fc.array(generatedEvent, { minLength: 1, maxLength: 5 }), (q, events) => {
        const compiled = compileHunt({ filter: q, pipes: [] });
        for (const e of events) assert.equal(compiled.matches(e), referenceMatches(q, e), JSON.stringify({ q, e }));
      }),
      { numRuns: 3000 },
    ));

  it('finds both verdicts often enough for the comparison to mean something', () => {
    let hits = 0;
    let total = 0;
    fc.assert(
      fc.property(term, generatedEvent, (q, e) => {
        total++;
        if (referenceMatches(q, e)) hits++;
      }),
      { numRuns: 2000 },
    );
    assert.ok(hits > total * 0.1 && hits < total * 0.9, `${hits} of ${total}`);
  });
});

describe('compileHunt: long paths', () => {
  it('reads a dotted key of up to 8 parts, and answers a path of thousands of parts', () => {
    const e = event({ attributes: { 'a.b.c.d.e.f.g': 'x', deep: { 'p.q': { r: 'y' } } } });
    assert.equal(matches('attributes.a.b.c.d.e.f.g:x', e), true);
    assert.equal(matches('attributes.deep.p.q.r:y', e), true);
    const long = `attributes.${Array.from({ length: 5000 }, () => 'a').join('.')}:x`;
    assert.equal(matches(long, e), false);
  });
});
