import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { eventsOfRecord } from '../../src/events/record-types.js';
import { expiringSegments, fateOfSummary, stillKept, summarizeSegment, type SegmentRecord } from '../../src/log/retention/plan.js';
import type { RetentionDays } from '../../src/log/retention/kinds.js';
import type { LogRecord } from '../../src/kernel/record.js';

const T0 = Date.parse('2026-10-01T00:00:00Z');
const TYPES = ['EventsIngested', 'AlertRaised', 'AlertReviewed', 'IncidentOpened', 'AccessRecorded', 'ApiRequestAudited', 'RulesImported', 'CollectorSubmissionAccepted', 'SomeFutureType'];
const days: RetentionDays = { evidence: 7, alerts: 30, reviews: 30, incidents: null, access: 14, audit: 60 };

const recordArb = fc.record({ type: fc.constantFrom(...TYPES), ageDays: fc.integer({ min: 0, max: 90 }) });

function segment(items: Array<{ type: string; ageDays: number }>, now: number): SegmentRecord[] {
  return items.map((it, i) => {
    const record: LogRecord = { seq: i + 1, at: new Date(now - it.ageDays * 86_400_000).toISOString(), type: it.type, data: { collectorId: 'c', epoch: 1, sequence: i, events: [{ id: `e${i}` }], event: { id: `a${i}` } }, prev: `p${i}` };
    return { record, hash: `h${i}` };
  });
}

describe('retention plan', () => {
  /** The fate of a segment as expiry decides it: summarized where it is read, then judged at the cut. */
  const fateOf = (seg: readonly SegmentRecord[], nowIso: string, latest: (r: LogRecord) => boolean) => {
    const summary = summarizeSegment(days, nowIso);
    for (const r of seg) summary.add(r);
    return { ...fateOfSummary(summary.summary(), latest), lastHash: summary.summary().lastHash };
  };

  it('carries or drops every record of a segment exactly once, keeping exactly what its kind still keeps', () => {
    fc.assert(fc.property(fc.array(recordArb, { maxLength: 60 }), fc.integer({ min: 0, max: 59 }), (items, latestIndex) => {
      const now = T0 + 100 * 86_400_000;
      const seg = segment(items, now);
      const nowIso = new Date(now).toISOString();
      const latest = (r: LogRecord) => r.seq === latestIndex + 1;
      const fate = fateOf(seg, nowIso, latest);
      assert.equal(fate.carried.length + fate.dropped.length, seg.length);
      assert.deepEqual([...fate.carried.map((c) => c.seq), ...fate.dropped.map((d) => d.seq)].sort((a, b) => a - b), seg.map((r) => r.record.seq));
      for (const c of fate.carried) {
        const kept = stillKept(c.type, c.at, days, nowIso) || (c.type === 'CollectorSubmissionAccepted' && c.seq === latestIndex + 1);
        assert.ok(kept, `${c.type} of ${c.at} was carried`);
        assert.equal(c.hash, `h${c.seq - 1}`, 'a carried record names its original hash');
      }
      for (const d of fate.dropped) {
        const { record } = seg[d.seq - 1]!;
        assert.equal(stillKept(record.type, record.at, days, nowIso), false);
        assert.deepEqual(d.eventIds, eventsOfRecord(record).map((e) => e.id), 'a dropped record names the events it takes with it');
      }
      assert.equal(fate.lastHash, seg.at(-1)?.hash ?? '');
      // Re-carrying is stable: a wrapper of carried records carries the same records again, judged by their own time.
      const wrapper: SegmentRecord = { record: { seq: 999, at: nowIso, type: 'RecordsCarriedForward', data: { records: fate.carried }, prev: 'x' }, hash: 'w' };
      const again = fateOf([wrapper], nowIso, latest);
      assert.deepEqual(again.carried, fate.carried);
      assert.deepEqual(again.dropped, []);
      // Records behind a wrapper are judged as the originals they are.
      const behind = fateOf([{ record: { seq: 999, at: nowIso, type: 'RecordsCarriedForward', data: { records: seg.map(({ record, hash }) => ({ ...record, hash })) }, prev: 'x' }, hash: 'w' }], nowIso, latest);
      assert.deepEqual(behind.carried, fate.carried);
      assert.deepEqual(behind.dropped, fate.dropped);
    }));
  });

  it('expires only whole segments, oldest first, while their newest record is older than the cut-off', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 1, max: 4 }), fc.integer({ min: 0, max: 5000 }), (head, k, cutAt) => {
      const size = 256 * k;
      const at = (seq: number) => new Date(T0 + seq * 1000).toISOString();
      const before = at(cutAt);
      const segs = expiringSegments(1, head, size, (s) => (s <= head ? at(s) : undefined), before, 100);
      let from = 1;
      for (const s of segs) {
        assert.deepEqual(s, { from, to: from + size - 1 });
        assert.ok(s.to <= head && s.to < cutAt);
        from += size;
      }
      const next = from + size - 1;
      assert.ok(next > head || next >= cutAt || segs.length === 100, 'the first segment left is not wholly expired');
    }));
  });
});
