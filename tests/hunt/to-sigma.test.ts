import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parse } from 'yaml';
import { compileSigma, type CompiledRule } from '../../src/detection/compile.js';
import { parseSigmaText } from '../../src/detection/sigma-yaml.js';
import type { NormalizedEvent } from '../../src/events/normalized-event.js';
import { compileHunt, huntToSigma, parseHunt, type HuntExpr, type HuntQuery } from '../../src/detection/hunt/index.js';
import { journal, zeek } from '../detection/make-event.js';

const ID = '3f0c7a52-9d1e-4b6a-8f21-7c5e2d9a4b10';

function query(text: string): HuntQuery {
  const r = parseHunt(text);
  if (!r.ok) assert.fail(r.error.message);
  return r.query;
}

function rule(yaml: string): CompiledRule {
  const parsed = parseSigmaText(yaml);
  if (!parsed.ok) assert.fail(parsed.error);
  const compiled = compileSigma(parsed.docs[0]);
  if (!compiled.ok) assert.fail(compiled.error);
  assert.equal(compiled.rule.kind, 'detection');
  return compiled.rule as CompiledRule;
}

/** Zeek and journal events of the shapes the normalizers produce. */
const FIXTURES: NormalizedEvent[] = [
  zeek('dns', { query: 'mail.example.ru', 'id.orig_h': '10.0.0.5', 'id.resp_p': 53, answers: ['192.0.2.1'], qtype_name: 'A' }),
  zeek('dns', { query: 'www.Example.com', 'id.orig_h': '192.168.1.7', 'id.resp_p': 53, answers: [], qtype_name: 'AAAA' }),
  zeek('conn', { 'id.orig_h': '10.0.0.5', 'id.resp_h': '203.0.113.9', 'id.resp_p': 22, duration: 1.5, conn_state: 'SF' }, { outcome: 'success' }),
  zeek('conn', { 'id.orig_h': '10.9.9.9', 'id.resp_h': '198.51.100.1', 'id.resp_p': 443, duration: null, conn_state: 'S0' }, { severity: 3 }),
  journal('sshd', 'Failed password for root from 203.0.113.5 port 22 ssh2', { class: 'authentication', outcome: 'failure', actor: { user: 'root' }, fields: { src_ip: '203.0.113.5' } }),
  journal('sudo', 'alice : TTY=pts/0 ; USER=root ; COMMAND=/bin/sh', { class: 'privilege', actor: { user: 'Alice' }, severity: 6 }),
];

describe('huntToSigma', () => {
  const MAPPABLE = [
    'source.adapter:network-monitor and attributes.query:*.example.ru',
    'source.adapter:network-monitor and attributes.id.orig_h:10.0.0.0/8 and not attributes.id.resp_p:(22 or 443)',
    'source.adapter:network-monitor and (attributes.id.resp_p >= 100 or attributes.conn_state:"S0")',
    'source.adapter:network-monitor and attributes.duration:*',
    'source.adapter:network-monitor and not attributes.duration:* and class:zeek_conn',
    'source.adapter:network-monitor and attributes.answers:"192.0.2.1" and attributes.qtype_name:a',
    'source.adapter:linux-journal and outcome:failure and actor.user:ROOT',
    'source.adapter:(linux-journal or syslog-rfc5424) and actor.user:alice and severity > 5',
    'source.adapter:linux-journal and attributes.MESSAGE:*TTY=pts?0*',
    'source.adapter:linux-journal and attributes.MESSAGE:"*TTY*"',
    'source.adapter:linux-journal and class:Authentication',
    'source.adapter:network-monitor and attributes.query:mail* | fields attributes.query | sort -time | head 5',
  ];
  const NO_MATCH = [MAPPABLE[8], MAPPABLE[9], MAPPABLE[10]];
  for (const text of MAPPABLE)
    it(`turns ${text} into a rule that matches the same fixture events`, () => {
      const q = query(text);
      const r = huntToSigma(q, { title: 'Saved hunt', id: ID });
      if (!r.ok) assert.fail(r.reasons.join('; '));
      const doc = parse(r.yaml) as Record<string, unknown>;
      assert.equal(doc['id'], ID);
      assert.equal(doc['status'], 'experimental');
      const compiled = rule(r.yaml);
      const hunt = compileHunt(q);
      const verdicts = FIXTURES.map((e) => hunt.matches(e));
      assert.deepEqual(FIXTURES.map((e) => compiled.match(e) !== undefined), verdicts, r.yaml);
      // `?` and a quoted `*` are literal, and class is compared case-sensitively: those three match nothing here.
      assert.equal(verdicts.includes(true), !NO_MATCH.includes(text), 'the fixture set exercises the query');
    });

  it('takes the logsource from the adapter', () => {
    const r = huntToSigma(query('source.adapter:network-monitor and attributes.query:x'), { title: 't', id: ID });
    assert.ok(r.ok);
    assert.deepEqual((parse(r.yaml) as { logsource: unknown }).logsource, { product: 'zeek' });
  });

  const UNMAPPABLE: Array<[string, RegExp]> = [
    ['attributes.query:x', /logsource/],
    ['source.adapter:(network-monitor or linux-journal) and attributes.query:x', /logsource/],
    ['source.adapter:network-monitor and example', /free text/],
    ['source.adapter:network-monitor and attributes.hops:{ host:a }', /nested/],
    ['source.adapter:network-monitor and time > "2026-01-01"', /not numeric/],
    ['source.adapter:network-monitor and attributes.*:x', /wildcard field/],
    ['source.adapter:network-monitor and entityKeys:"ip:10.0.0.5"', /no Sigma name/],
    ['source.adapter:network-monitor and query:x', /no Sigma name/],
    ['source.adapter:network-monitor | stats count() by attributes.query', /correlation/],
    ['source.adapter:network-monitor and attributes.source.adapter:x', /event's own/],
    ['*', /every event/],
  ];
  for (const [text, reason] of UNMAPPABLE)
    it(`refuses ${text} with its reason`, () => {
      const r = huntToSigma(query(text), { title: 't', id: ID });
      assert.equal(r.ok, false);
      if (!r.ok) assert.ok(r.reasons.some((x) => reason.test(x)), r.reasons.join('; '));
    });

  const field = fc.constantFrom('attributes.query', 'attributes.id.orig_h', 'attributes.id.resp_p', 'attributes.answers', 'attributes.duration', 'actor.user', 'severity', 'class', 'outcome');
  const value = fc.oneof(
    fc.constantFrom('mail.example.ru', 'ROOT', 'alice', '10.0.0.0/8', '53', '22', '1.5', 'SF', 'failure', 'zeek_conn', '192.0.2.1').map((t) => ({ quoted: false as const, parts: [t] })),
    fc.constantFrom('Alice', '53', '*x', '').map((t) => ({ quoted: true as const, text: t })),
    fc.constantFrom(['', '.example.ru'], ['10.', ''], ['', 'o', '']).map((parts) => ({ quoted: false as const, parts })),
  );
  const term: fc.Arbitrary<HuntExpr> = fc.oneof(
    fc.record({ kind: fc.constant('match' as const), field, value }),
    fc.record({ kind: fc.constant('exists' as const), field }),
    fc.record({ kind: fc.constant('range' as const), field, op: fc.constantFrom('<' as const, '>=' as const), value: fc.constantFrom('3', '53', '100').map((t) => ({ quoted: false as const, parts: [t] })) }),
  );
  const expr: fc.Arbitrary<HuntExpr> = fc.letrec<{ e: HuntExpr }>((tie) => ({
    e: fc.oneof(
      { depthSize: 'small' },
      term,
      fc.record({ kind: fc.constantFrom('and' as const, 'or' as const), items: fc.array(tie('e'), { minLength: 2, maxLength: 3 }) }),
      fc.record({ kind: fc.constant('not' as const), item: tie('e') }),
    ),
  })).e;

  it('for generated mappable queries, the rule and the hunt agree on every fixture event', () =>
    fc.assert(
      fc.property(expr, fc.constantFrom('network-monitor', 'linux-journal'), (e, adapter) => {
        const q: HuntQuery = { filter: { kind: 'and', items: [{ kind: 'match', field: 'source.adapter', value: { quoted: false, parts: [adapter] } }, e] }, pipes: [] };
        const r = huntToSigma(q, { title: 'generated', id: ID });
        if (!r.ok) assert.fail(r.reasons.join('; '));
        const compiled = rule(r.yaml);
        const hunt = compileHunt(q);
        for (const ev of FIXTURES) assert.equal(compiled.match(ev) !== undefined, hunt.matches(ev), `${r.yaml}\n${JSON.stringify(ev)}`);
      }),
      { numRuns: 500 },
    ));
});
