import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventOf } from '../../src/events/union.js';
import type { LogRecord } from '../../src/kernel/record.js';
import { SOURCES_KEPT, sourcesProjection, type SourcesState } from '../../src/projections/sources.js';
import { normalizedEvent } from '../helpers/event-fixtures.js';

let seq = 0;
const at = (i: number) => new Date(Date.parse('2026-11-22T10:00:00Z') + i * 1000).toISOString();
/** A record of syslog lines from the programs named, at second `i`. */
const lines = (i: number, ...programs: string[]): LogRecord => ({
  seq: ++seq, at: at(i), prev: '',
  ...eventOf('EventsIngested', { events: programs.map((p, n) => normalizedEvent({ id: `${p}-${i}-${n}`, source: { adapter: 'syslog-rfc5424', instance: 'default', recordId: String(n) }, attributes: { 'APP-NAME': p, MESSAGE: 'm' } })) }),
});
const fold = (records: readonly LogRecord[], from: SourcesState = sourcesProjection.initial()): SourcesState => records.reduce((s, r) => sourcesProjection.evolve(s, r), from);

describe('the sources model', () => {
  it('remembers at most SOURCES_KEPT sources, forgetting the least recently active: made-up program names do not push out a source in use', () => {
    // Every record a made-up program; sshd every 50 records.
    const records = Array.from({ length: SOURCES_KEPT + 2_000 }, (_, i) => (i % 50 === 0 ? lines(i, `junk${i}`, 'sshd') : lines(i, `junk${i}`)));
    const s = fold(records);
    assert.equal(s.size, SOURCES_KEPT);
    assert.ok(s.has('linux:prog:sshd'), 'a source active all along stays');
    assert.ok(s.has('linux'), 'and so does the key every line shares');
    assert.ok(s.has(`linux:prog:junk${SOURCES_KEPT + 1_999}`), 'the newest is remembered');
    assert.ok(!s.has('linux:prog:junk1'), 'the stalest are forgotten');
    assert.equal(s.get('linux:prog:sshd')!.events, Math.ceil((SOURCES_KEPT + 2_000) / 50));
    // A forgotten source seen again starts afresh.
    const again = fold([lines(SOURCES_KEPT + 2_000, 'junk1')], s);
    assert.equal(again.get('linux:prog:junk1')!.events, 1);
    assert.equal(again.size, SOURCES_KEPT);
  });

  it('forgets the same sources folded in one go or restored from a checkpoint on the way', () => {
    const records = Array.from({ length: SOURCES_KEPT + 300 }, (_, i) => lines(i, `p${i % (SOURCES_KEPT + 100)}`, i % 7 === 0 ? 'cron' : 'sshd'));
    const whole = fold(records);
    const cut = 2_500;
    const restored = sourcesProjection.restore!(structuredClone(sourcesProjection.snapshot!(fold(records.slice(0, cut)))));
    const resumed = fold(records.slice(cut), restored as SourcesState);
    assert.deepEqual([...resumed.keys()], [...whole.keys()]);
    assert.deepEqual(resumed, whole);
  });
});
