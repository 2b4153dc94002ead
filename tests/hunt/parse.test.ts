import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { HUNT_LIMITS, parseHunt, printHunt, type HuntQuery } from '../../src/detection/hunt/index.js';
import { huntQuery } from './arbitraries.js';

function parsed(text: string): HuntQuery {
  const r = parseHunt(text);
  if (!r.ok) assert.fail(`${JSON.stringify(text)} did not parse: ${r.error.message}`);
  return r.query;
}

/** Examples from Kibana's KQL documentation (kuery-query.html), as written there. */
const KIBANA_EXAMPLES = [
  'http.request.method: *',
  'http.request.method: GET',
  'Hello',
  'http.request.body.content: null pointer',
  'http.request.body.content: "null pointer"',
  'http.response.status_code:400',
  'http.response.status_code:400 401 404',
  'http.request.method: GET or http.request.method: POST',
  'http.request.method: GET AND http.response.status_code: 400',
  '(http.request.method: GET or http.request.method: POST) and http.response.status_code: 400',
  'http.request.method: (GET or POST or DELETE)',
  'http.request.method:(GET or POST or DELETE)',
  'not http.request.method: GET',
  'not http.response.status_code:400',
  'response:200 or extension:php',
  'account_number >= 100 and items_sold <= 200',
  'http.response.bytes < 10000',
  'http.response.bytes > 10000 and http.response.bytes <= 20000',
  '@timestamp < "2021-01-02T21:55:59"',
  '@timestamp < "2021-01"',
  '@timestamp < "2021"',
  'machine.os:win*',
  'machine.os*:windows 10',
  'datastream.dataset: logs*',
  'http.request.referrer: *',
  'http.response.body.content.text:"quick brown fox"',
  'user.names:{ first: "Alice" and last: "White" }',
  'user:{ names:{ first: "Alice" and last: "White" } }',
  'http.request.method:\\(',
  'http.request.referrer: https\\://example.com',
];

describe('parseHunt: Kibana examples', () => {
  for (const text of KIBANA_EXAMPLES)
    it(`parses ${text}`, () => {
      const q = parsed(text);
      assert.deepEqual(parsed(printHunt(q)), q);
    });

  it('reads the examples as KQL means them', () => {
    assert.deepEqual(parsed('http.request.method:(GET or POST)').filter, {
      kind: 'or',
      items: [
        { kind: 'match', field: 'http.request.method', value: { quoted: false, parts: ['GET'] } },
        { kind: 'match', field: 'http.request.method', value: { quoted: false, parts: ['POST'] } },
      ],
    });
    assert.deepEqual(parsed('machine.os*:windows 10').filter, { kind: 'match', field: 'machine.os*', value: { quoted: false, parts: ['windows 10'] } });
    assert.deepEqual(parsed('http.request.referrer: *').filter, { kind: 'exists', field: 'http.request.referrer' });
    assert.deepEqual(parsed('datastream.dataset: logs*').filter, { kind: 'match', field: 'datastream.dataset', value: { quoted: false, parts: ['logs', ''] } });
    assert.deepEqual(parsed('http.request.method:\\(').filter, { kind: 'match', field: 'http.request.method', value: { quoted: false, parts: ['('] } });
    assert.deepEqual(parsed('a:"x*"').filter, { kind: 'match', field: 'a', value: { quoted: true, text: 'x*' } });
    assert.deepEqual(parsed('a:\\not or b:\\AND').filter, {
      kind: 'or',
      items: [
        { kind: 'match', field: 'a', value: { quoted: false, parts: ['not'] } },
        { kind: 'match', field: 'b', value: { quoted: false, parts: ['AND'] } },
      ],
    });
  });

  it('binds and tighter than or and not tightest, keywords in any case', () => {
    assert.equal(printHunt(parsed('a:1 OR b:2 And NOT c:3')), 'a:1 or b:2 and not c:3');
    const f = parsed('a:1 or b:2 and not c:3').filter;
    assert.equal(f.kind, 'or');
    assert.equal(f.kind === 'or' && f.items[1]!.kind, 'and');
    assert.equal(parsed('').filter.kind, 'all');
    assert.equal(parsed('  *  ').filter.kind, 'all');
  });

  it('reads pipes and prints them canonically', () => {
    const text = 'actor.user:* | stats count(), dc(actor.host) by actor.user | sort -count | head 5';
    assert.equal(printHunt(parsed(text)), text);
    assert.equal(printHunt(parsed('x |top user')), 'x | top 10 user');
    assert.equal(printHunt(parsed('| timechart span=60s count() by f')), '* | timechart span=1m count() by f');
    assert.equal(printHunt(parsed('| TIMECHART count()')), '* | timechart span=auto count()');
    assert.equal(printHunt(parsed('a | sort time | head')), 'a | sort time | head 10');
  });
});

/** Bad queries and the offset each error must name. */
const BAD: Array<[string, number, string]> = [
  ['a:', 2, 'value'],
  ['a: ', 3, 'value'],
  ['a:(b', 4, ')'],
  ['(a:b', 4, ')'],
  ['a:b)', 3, 'end of query'],
  ['a and', 5, 'field name'],
  ['and a', 0, 'field name'],
  ['a:b or or c', 7, 'field name'],
  ['a:{b:c', 6, '}'],
  ['a:"unterminated', 2, '"'],
  ['a >= *', 5, 'value'],
  ['a < ', 4, 'value'],
  ['a:b c:d', 5, 'and'],
  ['a:\\q', 2, 'escapable character'],
  ['a*:{ b:c }', 0, 'field name'],
  ['a | bogus', 4, 'stats'],
  ['a | stats', 9, 'count()'],
  ['a | stats count(', 16, ')'],
  ['a | top 0 f', 8, 'a number from 1 to 1000'],
  ['a | top 1001 f', 8, 'a number from 1 to 1000'],
  ['a | timechart span=7x count()', 19, 'auto'],
  ['a | timechart span=1h dc(f)', 22, 'count()'],
  ['a | head 5 | stats count()', 2, ''],
  ['a | stats count() | top f', 18, ''],
  ['a | stats count() | fields f', 18, ''],
  ['a | stats count() by f | sort -g', 23, 'count'],
  ['a | head 5 | sort -time', 11, ''],
  ['a | sort time | sort -time', 14, ''],
  ['a | fields', 10, 'field name'],
  ['a | fields x*', 11, 'field name'],
  ['a | head 5 x', 11, '|'],
];

describe('parseHunt: errors', () => {
  for (const [text, position, expected] of BAD)
    it(`names offset ${position} in ${JSON.stringify(text)}`, () => {
      const r = parseHunt(text);
      assert.equal(r.ok, false);
      if (r.ok) return;
      assert.equal(r.error.position, position, r.error.message);
      assert.ok(r.error.message.startsWith(`at ${position}: `), r.error.message);
      if (expected !== '') assert.ok(r.error.expected.includes(expected), `${JSON.stringify(r.error.expected)} lacks ${expected}`);
    });

  it('refuses text past 16 KiB, nesting past 64 and more than 1000 terms, without overflowing the stack', () => {
    const long = parseHunt('a'.repeat(HUNT_LIMITS.textLength + 1));
    assert.equal(!long.ok && long.error.position, HUNT_LIMITS.textLength);
    const deep = parseHunt('('.repeat(5000) + 'a' + ')'.repeat(5000));
    assert.equal(!deep.ok && deep.error.position, HUNT_LIMITS.depth);
    const nots = parseHunt('not '.repeat(3000) + 'a');
    assert.equal(!nots.ok && nots.error.position, HUNT_LIMITS.depth * 4);
    const nested = parseHunt('a:{ '.repeat(1000) + 'b' + ' }'.repeat(1000));
    assert.equal(!nested.ok && nested.error.position, HUNT_LIMITS.depth * 4 + 2);
    const many = parseHunt(Array.from({ length: 1001 }, (_v, i) => `f:${i}`).join(' or '));
    assert.ok(!many.ok && /more than 1000 terms/.test(many.error.message));
    assert.ok(parseHunt(Array.from({ length: 1000 }, (_v, i) => `f:${i}`).join(' or ')).ok);
    assert.ok(parseHunt('('.repeat(63) + 'a' + ')'.repeat(63)).ok);
  });
});

describe('parseHunt and printHunt: properties', () => {
  it('re-parses what it prints to the same tree, and printing is a fixed point', () =>
    fc.assert(
      fc.property(huntQuery, (q) => {
        const text = printHunt(q);
        const back = parseHunt(text);
        if (!back.ok) throw new Error(`${JSON.stringify(text)}: ${back.error.message}`);
        assert.deepEqual(back.query, q, text);
        assert.equal(printHunt(back.query), text);
      }),
      { numRuns: 2000 },
    ));

  it('answers any text with a query or an error inside the text, never a throw', () =>
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 40 }), fc.array(fc.constantFrom('a', ':', '(', ')', '{', '}', '"', '\\', '*', ' ', 'or', 'and', 'not', '|', 'stats', 'count()', 'by', '<', '>=', ','), { maxLength: 20 }).map((t) => t.join(''))), (text) => {
        const r = parseHunt(text);
        if (r.ok) assert.deepEqual(parsed(printHunt(r.query)), r.query);
        else assert.ok(r.error.position >= 0 && r.error.position <= text.length, `${text}: ${r.error.position}`);
      }),
      { numRuns: 3000 },
    ));
});
