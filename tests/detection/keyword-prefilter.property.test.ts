import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { compileSigma, type CompiledRule } from '../../src/detection/compile.js';
import { createRuleSet } from '../../src/detection/engine.js';
import { indexKeysForEvent } from '../../src/detection/logsources.js';
import type { NormalizedEvent } from '../../src/events/normalized-event.js';
import { journal, makeEvent } from './make-event.js';

// Keyword rules are prefiltered by their keywords' literal texts (prefilter.ts): the engine must
// find exactly what trying every rule on every event finds, whatever the keywords and the texts.

const piece = fc.constantFrom('ssh', 'Fail', 'root', 'pass word', 'é', 'x', 'A', '-', '/tmp', '0');
const keyword = fc.array(fc.oneof(piece, fc.constantFrom('*', '?', '\\*', '\\\\')), { minLength: 1, maxLength: 4 }).map((parts) => parts.join(''));
const text = fc.array(piece, { maxLength: 5 }).map((parts) => parts.join(fc.sample(fc.constantFrom('', ' ', '*'), 1)[0]!));

const rule = fc.record({
  keywords: fc.array(keyword, { minLength: 1, maxLength: 4 }),
  all: fc.boolean(),
  shape: fc.constantFrom('k', 'k and f', 'k or f', 'not k', '1 of k*'),
  product: fc.constantFrom('linux', 'opentelemetry'),
}).map(({ keywords, all, shape, product }, ) => ({
  title: 'keyword rule',
  logsource: product === 'linux' ? { product: 'linux' } : { product: 'opentelemetry' },
  detection: { [all ? 'k1' : 'k']: all ? { '|all': keywords } : keywords, ...(shape === 'k' || shape === 'not k' ? {} : { f: { 'service|contains': 'x' } }), condition: shape.replaceAll('k', all ? 'k1' : 'k').replace('1 of k1*', '1 of k*') },
}));

const event = fc.oneof(
  fc.record({ program: text, message: text }).map(({ program, message }) => journal(program, message)),
  fc.record({ body: fc.option(text, { nil: undefined }), a: text, b: fc.array(text, { maxLength: 2 }) }).map(({ body, a, b }) => makeEvent({
    adapter: 'opentelemetry-log', attributes: { ...(body !== undefined ? { body } : {}), service: a, list: b, n: 7 },
  })),
);

function compiled(doc: unknown): CompiledRule | undefined {
  const r = compileSigma(doc);
  return r.ok && r.rule.kind === 'detection' ? (r.rule as CompiledRule) : undefined;
}

describe('keyword prefilter', () => {
  it('matches exactly what trying every rule on every event matches', () => {
    fc.assert(fc.property(fc.array(rule, { minLength: 1, maxLength: 8 }), fc.array(event, { minLength: 1, maxLength: 8 }), (docs, events: NormalizedEvent[]) => {
      const rules = docs.map(compiled).filter((r): r is CompiledRule => r !== undefined).map((r, i) => ({ ...r, id: `r${i}` }));
      const found = createRuleSet(rules).matchEvents(events).matches.map((m) => `${m.eventIds[0]} ${m.ruleId}`).sort();
      const truth: string[] = [];
      for (const e of events) {
        const keys = new Set(indexKeysForEvent(e));
        for (const r of rules) if (r.indexKeys.some((k) => keys.has(k)) && r.match(e) !== undefined) truth.push(`${e.id} ${r.id}`);
      }
      assert.deepEqual(found, truth.sort());
    }), { numRuns: 300 });
  });

  it('a keyword rule is not tried on an event without its text', () => {
    const r = compiled({ title: 't', logsource: { product: 'linux' }, detection: { k: ['Accepted publickey'], condition: 'k' } })!;
    assert.ok(r.triggers && r.triggers.some((t) => t.literals.includes('accepted publickey')));
    let calls = 0;
    const counted = { ...r, match: (e: NormalizedEvent) => { calls++; return r.match(e); } };
    const set = createRuleSet([counted]);
    set.matchEvents([journal('sshd', 'Failed password for root')]);
    assert.equal(calls, 0);
    assert.equal(set.matchEvents([journal('sshd', 'ACCEPTED PUBLICKEY for alice')]).matches.length, 1);
  });
});
