import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { logExport, replay } from '../../src/cli/log-commands.js';
import { TRUNCATED } from '../../src/kernel/json/depth.js';
import { openLmdbStore } from '../../src/log/lmdb-store.js';
import { encodeRecord, hashBytes } from '../../src/log/record.js';
import { type LogRecord } from '../../src/kernel/record.js';
import { verifyLog } from '../../src/log/verify.js';
import { openInstanceStore } from '../../src/cli/instance/open.js';
import { makeEvent, startTestInstance, type TestInstance } from '../helpers/instance.js';
import { attestPlantedTail } from '../helpers/signed-log.js';

const DEPTH = 10_000;
const MARK = '@@deep@@';

/** MessagePack of `{a: {a: … 'x'}}` nested `depth` maps deep, written by hand (msgpackr cannot pack it). */
function deepMsgpack(depth: number): Buffer {
  const out = Buffer.alloc(depth * 3 + 2);
  for (let i = 0; i < depth; i++) out.set([0x81, 0xa1, 0x61], i * 3);
  out.set([0xa1, 0x78], depth * 3);
  return out;
}

/**
 * Appends, below the edge, a chained EventsIngested record whose event holds a value `depth` levels
 * deep: what a log written before nesting was bounded (or by another tool) can contain.
 */
async function plantDeepRecord(storePath: string, id: string, depth: number): Promise<void> {
  const store = openLmdbStore(storePath);
  try {
    const log = store.db<Uint8Array, number>('log', { encoding: 'binary', keyEncoding: 'uint32' });
    const meta = store.db<{ seq: number; hash: string }, string>('log-meta');
    const head = meta.get('head')!;
    const record: LogRecord = { seq: head.seq + 1, at: '2026-11-22T10:00:00.000Z', type: 'EventsIngested', data: { events: [makeEvent({ id, attributes: { deep: MARK } })] }, prev: head.hash };
    const plain = Buffer.from(encodeRecord(record));
    const marker = Buffer.concat([Buffer.from([0xa0 | MARK.length]), Buffer.from(MARK)]);
    const at = plain.indexOf(marker);
    assert.ok(at > 0);
    const bytes = Buffer.concat([plain.subarray(0, at), deepMsgpack(depth), plain.subarray(at + marker.length)]);
    log.putSync(record.seq, bytes);
    meta.putSync('head', { seq: record.seq, hash: hashBytes(bytes) });
  } finally {
    await store.close();
  }
}

describe('a poison record already in the log', () => {
  let t: TestInstance;
  before(async () => {
    t = await startTestInstance();
    assert.equal((await t.request('/api/v1/events', { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify([makeEvent({ id: 'plain-1' })]) })).status, 202);
    await t.restart(async (path) => {
      await plantDeepRecord(path, 'deep-1', DEPTH);
      await attestPlantedTail(t.config);
    });
  });
  after(async () => { await t.close(); });

  it('still serves GET /api/v1/events, with the part past the bound replaced by a marker', async () => {
    for (const token of [t.tokens.viewer, t.tokens.admin]) {
      const res = await t.request('/api/v1/events?limit=1000', { token });
      assert.equal(res.status, 200);
      const body = await res.json() as { events: Array<{ id: string; attributes: Record<string, unknown> }> };
      const deep = body.events.find((e) => e.id === 'deep-1');
      assert.ok(deep, 'the deep event is listed');
      assert.ok(body.events.some((e) => e.id === 'plain-1'));
      let node: unknown = deep.attributes.deep;
      let levels = 2; // the event object and its attributes
      while (typeof node === 'object' && node !== null) { node = (node as { a: unknown }).a; levels++; }
      assert.equal(node, TRUNCATED);
      assert.ok(levels <= 64, `served ${levels} levels`);
    }
  });

  it('verifies, exports and replays', async () => {
    await t.restart(async (path) => {
      const inst = await openInstanceStore(path);
      let head: number;
      try {
        const verified = verifyLog(inst.log);
        assert.equal(verified.ok, true, JSON.stringify(verified));
        head = inst.log.head().seq;
      } finally {
        await inst.close();
      }
      const lines: string[] = [];
      assert.equal(await logExport(path, 1, undefined, (l) => lines.push(l)), head);
      const exported = lines.map((l) => JSON.parse(l) as { data: { events?: Array<{ id: string }> } });
      assert.ok(exported.some((r) => r.data.events?.some((e) => e.id === 'deep-1')));
      assert.equal((await replay(path, undefined)).records, head);
    });
    assert.equal((await t.request('/api/v1/events?limit=1000', { token: t.tokens.viewer })).status, 200);
  });
});
