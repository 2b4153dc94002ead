import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { liveLogVerifier } from '../../src/cli/instance/live-verify.js';
import { encodeRecord, decodeRecord } from '../../src/log/record.js';
import { makeEvent, startTestInstance } from '../helpers/instance.js';

interface Verdict { ok: boolean; records: number; head?: string; badSeq?: number; reason?: string; tree?: { ok: boolean; checkpoints?: number } }

describe('GET /api/v1/log/verify', () => {
  it('answers an admin the verdict of vigil log verify, refuses an analyst, and reports a record changed in the store', async () => {
    const t = await startTestInstance();
    try {
      const ingest = await t.request('/api/v1/events', { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify([makeEvent({ id: 'ev-verify-1' }), makeEvent({ id: 'ev-verify-2' })]) });
      assert.equal(ingest.status, 202);
      await t.transparency.make();
      const head = t.inst.log.head();

      const res = await t.request('/api/v1/log/verify', { token: t.tokens.admin });
      assert.equal(res.status, 200);
      const verdict = await res.json() as Verdict;
      assert.equal(verdict.ok, true, JSON.stringify(verdict));
      // Up to the head it read when it began: at least every record acknowledged before the request.
      assert.ok(verdict.records >= head.seq, `${verdict.records} records verified, the head was ${head.seq}`);
      assert.equal(verdict.tree?.ok, true);
      assert.ok((verdict.tree?.checkpoints ?? 0) >= 1, 'the checkpoint made above is checked');

      const analyst = await t.request('/api/v1/log/verify', { token: t.tokens.analyst });
      assert.equal(analyst.status, 403);
      assert.equal(typeof (await analyst.json() as { error: unknown }).error, 'string');

      // An intruder with the disk rewrites record 2's data in place (the service keeps running).
      const records = t.inst.store.db<Uint8Array, number>('log', { encoding: 'binary', keyEncoding: 'uint32' });
      const original = decodeRecord(records.get(2)!);
      await records.put(2, encodeRecord({ ...original, at: '2000-01-01T00:00:00.000Z' }));
      const tampered = await (await t.request('/api/v1/log/verify', { token: t.tokens.admin })).json() as Verdict;
      assert.equal(tampered.ok, false);
      assert.equal(tampered.badSeq, 3);
      assert.match(tampered.reason ?? '', /chain broken: record 3 does not link to the hash of record 2/);
    } finally {
      await t.close();
    }
  });

  it('runs one verification at a time: a request made while one runs shares its verdict', async () => {
    const t = await startTestInstance();
    try {
      const verify = liveLogVerifier(t.config.storage.path, t.transparency.verifier);
      const first = verify();
      const second = verify();
      assert.equal(first, second, 'the running verification is joined, not started again');
      const [a, b] = await Promise.all([first, second]);
      assert.deepEqual(a, b);
      const third = verify();
      assert.notEqual(third, first, 'once it has answered, the next request starts a new one');
      assert.equal((await third).ok, true);
    } finally {
      await t.close();
    }
  });
});
