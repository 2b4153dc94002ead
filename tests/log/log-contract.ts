import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { EventLog } from '../../src/log/event-log.js';
import { verifyLog } from '../../src/log/verify.js';

/** A backend under test: open a fresh log (or reopen the same one), and tamper with stored bytes. */
export interface LogBackend {
  readonly name: string;
  open(): Promise<{ log: EventLog; reopen(): Promise<EventLog>; close(): Promise<void>; tamper(seq: number, bytes: Uint8Array | undefined): Promise<void> }>;
}

const rec = (type: string, data: unknown) => ({ type, at: '2026-11-22T00:00:00Z', data });

/** The contract every EventLog backend must pass. */
export function logContract(backend: LogBackend): void {
  describe(`EventLog contract: ${backend.name}`, () => {
    it('assigns dense seq from 1 and chains records', async () => {
      const h = await backend.open();
      try {
        const a = await h.log.append([rec('A', 1), rec('B', { x: [1, 2] })]);
        const b = await h.log.append([rec('C', 'three')]);
        assert.deepEqual([...a, ...b].map((r) => r.seq), [1, 2, 3]);
        assert.equal(b[0]!.prev.length, 64);
        assert.equal(h.log.head().seq, 3);
        assert.deepEqual([...h.log.read(2)].map((r) => r.type), ['B', 'C']);
        assert.deepEqual([...h.log.read(1, 1)].map((r) => r.data), [1]);
        assert.deepEqual(verifyLog(h.log), { ok: true, records: 3, head: h.log.head().hash });
      } finally { await h.close(); }
    });

    it('removes a prefix atomically with the records that name the cut, and verifies from the cut (when the backend has retention)', async () => {
      const h = await backend.open();
      try {
        if (!h.log.removePrefix) return;
        await h.log.append(Array.from({ length: 300 }, (_, i) => rec('A', i)));
        const at256 = [...h.log.read(257, 257)][0]!.prev;
        const cut = { firstSeq: 257, prevHash: at256, treeRoot: 'root' };
        const appended = await h.log.removePrefix(cut, [rec('Cut', { firstSeq: 257 })]);
        assert.deepEqual(appended.map((r) => r.seq), [301]);
        assert.equal([...h.log.read(1)][0]!.seq, 257);
        assert.deepEqual([...h.log.read(1, 256)], []);
        assert.deepEqual(verifyLog(h.log, cut), { ok: true, records: 45, head: h.log.head().hash, from: 257 });
        assert.equal(verifyLog(h.log).ok, false, 'verified from record 1, the removed prefix is missing');
        const log = await h.reopen();
        assert.equal([...log.read(1)][0]!.seq, 257);
        await log.append([rec('B', 1)]);
        assert.deepEqual(verifyLog(log, cut), { ok: true, records: 46, head: log.head().hash, from: 257 });
        await assert.rejects(log.removePrefix!({ ...cut, firstSeq: 200 }, [rec('Cut', {})]), /cannot cut the log at 200/);
      } finally { await h.close(); }
    });

    it('keeps records and head across a reopen', async () => {
      const h = await backend.open();
      try {
        await h.log.append([rec('A', 1), rec('B', 2)]);
        const headBefore = h.log.head();
        const log = await h.reopen();
        assert.deepEqual(log.head(), headBefore);
        await log.append([rec('C', 3)]);
        assert.deepEqual(verifyLog(log), { ok: true, records: 3, head: log.head().hash });
      } finally { await h.close(); }
    });

    it('delivers stored and new records to a follower', async () => {
      const h = await backend.open();
      try {
        await h.log.append([rec('A', 1)]);
        const seen: number[] = [];
        const stop = h.log.follow(0, (r) => seen.push(r.seq));
        await h.log.append([rec('B', 2), rec('C', 3)]);
        stop();
        await h.log.append([rec('D', 4)]);
        assert.deepEqual(seen, [1, 2, 3]);
      } finally { await h.close(); }
    });

    it('chains concurrent appends in call order', async () => {
      const h = await backend.open();
      try {
        await Promise.all(Array.from({ length: 20 }, (_, i) => h.log.append([rec('N', i), rec('M', i)])));
        assert.deepEqual([...h.log.read(1)].map((r) => r.data), Array.from({ length: 20 }, (_, i) => [i, i]).flat());
        assert.equal(verifyLog(h.log).ok, true);
      } finally { await h.close(); }
    });

    it('detects a changed, a removed and a reordered record', async () => {
      for (const attack of ['change', 'remove', 'swap', 'tail', 'cut'] as const) {
        const h = await backend.open();
        try {
          await h.log.append([rec('A', 1), rec('B', 2), rec('C', 3), rec('D', 4)]);
          const raw = [...h.log.readRaw(1)].map((r) => r.bytes);
          if (attack === 'change') {
            const { encodeRecord, decodeRecord } = await import('../../src/log/record.js');
            const r = decodeRecord(raw[1]!);
            await h.tamper(2, encodeRecord({ ...r, data: 999 }));
          } else if (attack === 'remove') await h.tamper(3, undefined);
          else if (attack === 'swap') { await h.tamper(2, raw[2]!); await h.tamper(3, raw[1]!); }
          else if (attack === 'cut') { await h.tamper(3, undefined); await h.tamper(4, undefined); }
          else {
            const { encodeRecord, decodeRecord } = await import('../../src/log/record.js');
            await h.tamper(4, encodeRecord({ ...decodeRecord(raw[3]!), type: 'X' }));
          }
          const result = verifyLog(h.log);
          assert.equal(result.ok, false, attack);
          if (!result.ok) assert.equal(result.badSeq, attack === 'tail' ? 4 : attack === 'change' || attack === 'remove' || attack === 'cut' ? 3 : 2, `${attack}: ${result.reason}`);
        } finally { await h.close(); }
      }
    });
  });
}
