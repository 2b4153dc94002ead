import fc from 'fast-check';
import type { HuntExpr, HuntPipe, HuntQuery, HuntValue } from '../../src/detection/hunt/index.js';

/** Field names, some needing escapes when printed (`x y`, `a:b`, the keywords), some with wildcards. */
const plainField = fc.constantFrom('a', 'actor.user', 'attributes.id.orig_h', 'x y', 'a:b', 'or', 'AND', 'not', 'f(', '@timestamp', 'é.ü', 'class', 'source.adapter');
const field = fc.oneof(plainField, fc.constantFrom('machine.os*', '*', 'a*b'));

/** Value text: letters, digits, spaces, tabs, every special character, and the keywords as words. */
const piece = fc.constantFrom('a', 'B', '5', '-', '.', ' ', '\t', '*', '\\', '"', ':', '(', ')', '{', '}', '|', '<', '>', 'or', 'and', 'NOT', 'é', 'n', 't', '/', '10.0.0.0/8');
const text = fc.array(piece, { maxLength: 5 }).map((p) => p.join(''));

const quoted: fc.Arbitrary<HuntValue> = fc.oneof(text, fc.string({ maxLength: 6 })).map((t) => ({ quoted: true, text: t.replace(/\n/g, '') }));
const unquoted: fc.Arbitrary<HuntValue> = fc
  .array(text, { minLength: 1, maxLength: 3 })
  .filter((parts) => !(parts.length === 1 && parts[0] === '') && !(parts.length === 2 && parts[0] === '' && parts[1] === ''))
  .map((parts) => ({ quoted: false, parts }));
const plainUnquoted: fc.Arbitrary<HuntValue> = text.filter((t) => t !== '').map((t) => ({ quoted: false, parts: [t] }));

/** Filters as the parser builds them (and/or with two or more items). */
export const huntExpr: fc.Arbitrary<HuntExpr> = fc.letrec<{ expr: HuntExpr }>((tie) => ({
  expr: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ kind: fc.constant('match' as const), field: fc.option(field, { nil: null }), value: fc.oneof(quoted, unquoted) }),
    fc.record({ kind: fc.constant('exists' as const), field }),
    fc.record({ kind: fc.constant('range' as const), field, op: fc.constantFrom('<' as const, '<=' as const, '>' as const, '>=' as const), value: fc.oneof(quoted, plainUnquoted) }),
    fc.constant({ kind: 'all' as const }),
    fc.record({ kind: fc.constantFrom('and' as const, 'or' as const), items: fc.array(tie('expr'), { minLength: 2, maxLength: 3 }) }),
    fc.record({ kind: fc.constant('not' as const), item: tie('expr') }),
    fc.record({ kind: fc.constant('nested' as const), field: plainField, query: tie('expr') }),
  ),
})).expr;

const pipeField = fc.constantFrom('a', 'actor.user', 'source.adapter', 'attributes.id.orig_h', 'x_1', '@t');
const head = fc.option(fc.integer({ min: 1, max: 1000 }).map((limit): HuntPipe => ({ kind: 'head', limit })), { nil: undefined });

const aggregation: fc.Arbitrary<HuntPipe> = fc.oneof(
  fc.record({
    kind: fc.constant('stats' as const),
    aggs: fc.array(fc.oneof(fc.constant({ fn: 'count' as const }), pipeField.map((f) => ({ fn: 'dc' as const, field: f }))), { minLength: 1, maxLength: 2 }),
    by: fc.uniqueArray(pipeField, { maxLength: 3 }),
  }),
  fc.record({ kind: fc.constant('top' as const), limit: fc.integer({ min: 1, max: 1000 }), field: pipeField }),
  fc.record({ kind: fc.constant('timechart' as const), spanMs: fc.constantFrom(1000, 30_000, 90_000, 3_600_000, 86_400_000, 'auto' as const), by: fc.option(pipeField, { nil: null }) }),
);

function columns(p: HuntPipe): string[] {
  if (p.kind === 'stats') return [...p.by, ...p.aggs.map((a) => (a.fn === 'count' ? 'count' : `dc(${a.field})`))];
  if (p.kind === 'top') return [p.field, 'count', 'percent'];
  if (p.kind === 'timechart') return p.by === null ? ['time', 'count'] : ['time', p.by, 'count'];
  return [];
}

const rowPipes: fc.Arbitrary<HuntPipe[]> = aggregation.chain((agg) =>
  fc.tuple(fc.option(fc.tuple(fc.constantFrom(...columns(agg)), fc.boolean()), { nil: undefined }), head).map(([sort, h]) => [
    agg,
    ...(sort ? [{ kind: 'sort' as const, field: sort[0], descending: sort[1] }] : []),
    ...(h ? [h] : []),
  ]),
);

const eventPipes: fc.Arbitrary<HuntPipe[]> = fc
  .tuple(
    fc.option(fc.uniqueArray(pipeField, { minLength: 1, maxLength: 3 }), { nil: undefined }),
    fc.option(fc.tuple(fc.oneof(pipeField, fc.constant('time')), fc.boolean()), { nil: undefined }),
    head,
  )
  .map(([fields, sort, h]) => [
    ...(fields ? [{ kind: 'fields' as const, fields }] : []),
    ...(sort ? [{ kind: 'sort' as const, field: sort[0], descending: sort[1] }] : []),
    ...(h ? [h] : []),
  ]);

/** Whole queries: a filter and a legal pipe sequence. */
export const huntQuery: fc.Arbitrary<HuntQuery> = fc
  .record({ filter: huntExpr, pipes: fc.oneof(eventPipes, rowPipes) })
  // fast-check builds records without a prototype; the parser's objects have Object's.
  .map((q) => JSON.parse(JSON.stringify(q)) as HuntQuery);
