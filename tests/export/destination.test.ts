import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { startDestination, backoffMs } from '../../src/services/export/destination.js';
import type { CursorStore } from '../../src/services/export/cursor.js';
import { fileCursor } from '../../src/services/export/cursor.js';
import type { ExportItem } from '../../src/services/export/items.js';
import type { Sender, SendResult } from '../../src/services/export/senders.js';
import type { ExportObservation } from '../../src/commands/export-state.js';
import type { LogRecord } from '../../src/kernel/record.js';
import type { ExportConfig, ExportDestination } from '../../src/services/export/config.js';
import { recordedStatus } from '../../src/services/export/start.js';
import { normalizedEvent, eventsIngested } from '../helpers/event-fixtures.js';
import { tempDir } from '../helpers/temp.js';

const dest = (over: Partial<ExportDestination> = {}): ExportDestination => ({
  kind: 'webhook', name: 'hook', url: 'http://127.0.0.1:1/', secretFile: '/x', carries: ['events'], includeRaw: false,
  batchSize: 3, maxLagRecords: 1000, failingAfterSeconds: 300, timeoutSeconds: 5, ...over,
} as ExportDestination);

/** A log of `n` records, each carrying `perRecord` events. */
function memoryLog(n: number, perRecord = 1) {
  const records: LogRecord[] = [];
  const add = (count: number) => {
    for (let k = 0; k < count; k++) {
      const seq = records.length + 1;
      const e = eventsIngested(...Array.from({ length: perRecord }, (_, i) => normalizedEvent({ id: `s${seq}-${i}` })));
      records.push({ seq, at: '2026-11-23T00:00:00.000Z', type: e.type, data: e.data, prev: '' });
    }
  };
  add(n);
  return { records, add, read: (from: number, to: number) => records.slice(from - 1, to) };
}

const memoryCursor = (start = 0): CursorStore & { saved: number[] } => {
  const saved: number[] = [];
  let seq = start;
  return { saved, load: () => seq, save: (s) => { seq = s; saved.push(s); } };
};

/** A sender that answers from a script, recording every attempt. */
function scripted(answers: (attempt: number) => SendResult): Sender & { attempts: ExportItem[][]; delivered: ExportItem[] } {
  const attempts: ExportItem[][] = [];
  const delivered: ExportItem[] = [];
  return {
    attempts, delivered,
    async send(items) {
      attempts.push([...items]);
      const a = answers(attempts.length);
      if (a.ok) delivered.push(...items);
      return a;
    },
    close: () => undefined,
  };
}

async function until(check: () => boolean, what: string, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('an export destination', () => {
  it('delivers every item in log order, batch by batch, and moves its cursor only after delivery', async () => {
    const log = memoryLog(10, 2);
    const cursor = memoryCursor();
    const sender = scripted(() => ({ ok: true }));
    const r = startDestination({ destination: dest(), origin: 'o', read: log.read, head: 10, cursor, sender, now: Date.now, random: () => 0, onState: () => undefined });
    await until(() => r.status().cursor === 10, 'cursor 10');
    assert.deepEqual(sender.delivered.map((i) => (i.data as { id: string }).id), log.records.flatMap((rec) => [`s${rec.seq}-0`, `s${rec.seq}-1`]));
    assert.ok(sender.attempts.every((b) => b.length <= 3));
    assert.deepEqual(cursor.saved, [...cursor.saved].sort((a, b) => a - b));
    log.add(2);
    r.notify(12);
    await until(() => r.status().cursor === 12, 'cursor 12');
    assert.equal(sender.delivered.length, 24);
    await r.stop();
  });

  it('retries a refused batch after the receiver\'s Retry-After, loses nothing, and reports the error', async () => {
    const log = memoryLog(5);
    const sender = scripted((n) => (n <= 3 ? { ok: false, error: 'HTTP 503', retryAfterMs: 10 } : { ok: true }));
    const r = startDestination({ destination: dest(), origin: 'o', read: log.read, head: 5, cursor: memoryCursor(), sender, now: Date.now, random: () => 0.5, onState: () => undefined });
    await until(() => r.status().cursor === 5, 'delivery after the refusals');
    assert.deepEqual(sender.attempts.slice(0, 4).map((b) => b[0]!.id), ['o/1/0', 'o/1/0', 'o/1/0', 'o/1/0']);
    assert.deepEqual(sender.delivered.map((i) => i.seq), [1, 2, 3, 4, 5]);
    const s = r.status();
    assert.equal(s.lastError?.message, 'HTTP 503');
    assert.equal(s.state, 'delivering');
    await r.stop();
  });

  it('turns failing past its lag bound, says so once, and recovers once it catches up', async () => {
    const log = memoryLog(20);
    let down = true;
    const sender = scripted(() => (down ? { ok: false, error: 'connect ECONNREFUSED', retryAfterMs: 5 } : { ok: true }));
    const seen: ExportObservation[] = [];
    const r = startDestination({ destination: dest({ maxLagRecords: 10 }), origin: 'o', read: log.read, head: 20, cursor: memoryCursor(), sender, now: Date.now, random: () => 0, onState: (o) => seen.push(o) });
    await until(() => seen.length === 1, 'failing');
    assert.equal(seen[0]!.state, 'failing');
    assert.equal(seen[0]!.lagRecords, 20);
    assert.match(seen[0]!.reason, /20 records not delivered \(bound 10\)/);
    await until(() => sender.attempts.length > 5, 'more attempts');
    assert.equal(seen.length, 1);
    assert.equal(r.status().state, 'failing');
    down = false;
    await until(() => seen.length === 2, 'delivering again');
    assert.equal(seen[1]!.state, 'delivering');
    await until(() => r.status().cursor === 20, 'caught up');
    await r.stop();
  });

  it('resumes from its durable cursor after a restart, delivering again at most the unfinished batch', async () => {
    const dir = tempDir();
    const log = memoryLog(9);
    const first = scripted((n) => (n <= 2 ? { ok: true } : { ok: false, error: 'down', retryAfterMs: 60_000 }));
    const a = startDestination({ destination: dest(), origin: 'o', read: log.read, head: 9, cursor: fileCursor(dir.path, 'hook'), sender: first, now: Date.now, random: () => 0, onState: () => undefined });
    await until(() => first.attempts.length === 3, 'third attempt');
    await a.stop();
    assert.equal(fileCursor(dir.path, 'hook').load(), 6);
    const second = scripted(() => ({ ok: true }));
    const b = startDestination({ destination: dest(), origin: 'o', read: log.read, head: 9, cursor: fileCursor(dir.path, 'hook'), sender: second, now: Date.now, random: () => 0, onState: () => undefined });
    await until(() => b.status().cursor === 9, 'resumed');
    assert.deepEqual([...first.delivered, ...second.delivered].map((i) => i.seq), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
    await b.stop();
  });

  it('backs off exponentially with jitter, capped at a minute (property)', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 100 }), fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), (attempt, random) => {
      const ms = backoffMs(attempt, random);
      const ceiling = Math.min(60_000, 500 * 2 ** (attempt - 1));
      assert.ok(ms >= Math.floor(ceiling / 2) && ms <= ceiling, `${attempt}: ${ms}`);
    }));
  });
});

describe('a follower\'s export status (what the log records of the leader\'s delivery)', () => {
  it('shows each configured destination at its recorded cursor, failing when the log says so, delivered by the leader', () => {
    const config = { destinations: [dest({ name: 'a' }), dest({ name: 'b' }), dest({ name: 'c' })] } as ExportConfig;
    const state = { configuration: undefined, cursors: new Map([['a', 40], ['b', 99]]), failing: new Map([['b', '2026-11-24T00:00:00.000Z']]) };
    const status = recordedStatus(config, state, 50);
    assert.deepEqual(status.map((d) => [d.name, d.cursor, d.lagRecords, d.state, d.deliveredBy, d.delivered, d.failedAttempts]), [
      ['a', 40, 10, 'delivering', 'leader', 0, 0],
      ['b', 50, 0, 'failing', 'leader', 0, 0], // this node's copy is behind the recorded cursor
      ['c', 0, 50, 'delivering', 'leader', 0, 0],
    ]);
    assert.deepEqual(status.map((d) => [d.kind, d.target, d.head]), [['webhook', 'http://127.0.0.1:1/', 50], ['webhook', 'http://127.0.0.1:1/', 50], ['webhook', 'http://127.0.0.1:1/', 50]]);
  });
});
