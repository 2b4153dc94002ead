import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Packr } from 'msgpackr';
import { decideImportRules } from '../../src/commands/import-rules.js';
import { decideIngestEvents } from '../../src/commands/ingest-events.js';
import { decideReviewAlert } from '../../src/commands/review-alert.js';
import { decideSetRuleSuppression } from '../../src/commands/rule-suppression.js';
import { openInstanceStore, type InstanceStore } from '../../src/cli/instance/open.js';
import { DEFAULT_RULE_LIMITS } from '../../src/detection/rule-limits.js';
import type { NormalizedEvent } from '../../src/events/normalized-event.js';
import { HEAP_PROJECTIONS } from '../../src/projections/all.js';
import { normalizedEvent } from '../helpers/event-fixtures.js';
import { tempDir } from '../helpers/temp.js';

const A = 'aaaaaaaa-0000-4000-8000-0000000007a1';
const C = 'aaaaaaaa-0000-4000-8000-0000000007c1';
const RULES = `title: DNS evil
id: ${A}
logsource: {product: zeek, service: dns}
detection: {sel: {query: evil.example}, condition: sel}
suppress: {by: [user], for: 20m}
---
title: Evil lookups
id: ${C}
correlation: {type: event_count, rules: [${A}], group-by: [src, user], timespan: 10m, condition: {gte: 2}}
generate: true
suppress: {by: [user], for: 30m}
`;

const packr = new Packr({ useRecords: false, mapsAsObjects: true });

/** The write side's alerts and detection models as plain data, with the index that decides which alert a match joins. */
function dump(inst: InstanceStore): unknown {
  const models = HEAP_PROJECTIONS.filter((p) => p.name === 'alerts' || p.name === 'detection').map((p) => [
    p.name,
    packr.unpack(packr.pack(p.snapshot ? p.snapshot(inst.runtime.state(p.name)) : inst.runtime.state(p.name))),
  ]);
  return { models, openByKey: [...inst.writer.models.alerts.openByKey].sort() };
}

const lookupArb = fc.record({
  minute: fc.integer({ min: 0, max: 180 }),
  user: fc.constantFrom('bob', 'eve'),
  src: fc.constantFrom('10.0.0.7', '10.0.0.8'),
});

const commandArb = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('ingest' as const), events: fc.array(lookupArb, { minLength: 1, maxLength: 6 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('dismiss' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('suppress' as const), by: fc.constantFrom<string[] | null>(['src'], ['user', 'src'], null), minutes: fc.integer({ min: 1, max: 90 }) }) },
);

describe('suppressed alerts in the log', () => {
  it('fold from record 1 and from a checkpoint into the same models as live, for any sequence of matches', async () => {
    let suppressedSeen = 0;
    await fc.assert(fc.asyncProperty(fc.array(commandArb, { minLength: 1, maxLength: 14 }), async (commands) => {
      const dir = tempDir();
      let inst = await openInstanceStore(`${dir.path}/store`, { checkpointEvery: 5 });
      try {
        const ctx = { now: '2026-11-22T12:00:00.000Z', actor: { id: 'prop-admin', authentication: 'bearer' } };
        await inst.pipeline.dispatch({ decide: (m) => decideImportRules(m.detection, RULES, 'api', DEFAULT_RULE_LIMITS), ctx });
        let n = 0;
        for (const c of commands) {
          if (c.kind === 'ingest') {
            const events: NormalizedEvent[] = c.events.map((e) => normalizedEvent({
              id: `q${n++}`,
              time: new Date(Date.parse('2026-11-22T10:00:00Z') + e.minute * 60_000).toISOString(),
              source: { adapter: 'network-monitor', instance: 'dns', recordId: `q${n}` },
              entityKeys: [`ip:${e.src}`],
              attributes: { query: 'evil.example', user: e.user, src: e.src },
            }));
            await inst.pipeline.dispatch({ decide: (m) => decideIngestEvents(m, events), ctx });
          } else if (c.kind === 'dismiss') {
            const ids = [...inst.writer.models.alerts.alerts.keys()];
            const id = ids[c.pick % Math.max(1, ids.length)];
            if (id !== undefined) await inst.writer.execute((m) => decideReviewAlert(m.alerts, id, { status: 'dismissed', reason: 'prop' }, ctx), ctx);
          } else {
            const body = c.by ? { by: c.by, for: `${c.minutes}m`, reason: 'prop' } : { reason: 'prop' };
            // A clear with nothing set is refused, and must change nothing.
            await inst.writer.execute((m) => decideSetRuleSuppression(m.detection, A, body, ctx), ctx);
          }
        }
        const alerts = [...inst.writer.models.alerts.alerts.values()].filter((a) => a.ruleId === A || a.ruleId === C);
        const live = dump(inst);
        await inst.close();
        inst = await openInstanceStore(`${dir.path}/store`, { checkpointEvery: 5 });
        assert.deepEqual(dump(inst), live, 'restored from checkpoint + tail');
        await inst.runtime.rebuild();
        assert.deepEqual(dump(inst), live, 'rebuilt from record 1');
        // The log held suppressed alerts whenever two matches of one user came close enough.
        for (const a of alerts) if (a.suppression) assert.equal(a.matchCount, 1 + a.suppressedCount!);
        suppressedSeen += alerts.reduce((sum, a) => sum + (a.suppressedCount ?? 0), 0);
      } finally {
        await inst.close();
        dir.cleanup();
      }
    }), { numRuns: 15 });
    assert.ok(suppressedSeen > 0, 'the runs replayed suppressed alerts');
  });
});
