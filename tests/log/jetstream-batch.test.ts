import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FatalStorageError } from '../../src/log/event-log.js';
import { packBatch, republish, unpackBatch } from '../../src/log/jetstream-batch.js';
import type { PubAck } from '@nats-io/jetstream';

const ack = (seq: number, duplicate = false): PubAck => ({ stream: 'S', seq, duplicate });
const later = () => performance.now() + 60_000;

describe('republishing a batch', () => {
  it('takes the answer of a later attempt after a timeout (a stored attempt answers as a duplicate)', async () => {
    const answers: Array<() => Promise<PubAck>> = [() => Promise.reject(new Error('timeout')), () => Promise.resolve(ack(7, true))];
    assert.deepEqual(await republish(() => answers.shift()!(), new Error('timeout'), later()), ack(7, true));
  });

  it('retries once at once after a wrong last sequence (a race with the batch before), and treats a second as another writer', async () => {
    let calls = 0;
    const wrong = () => { calls++; return Promise.reject(new Error('wrong last sequence: 12')); };
    await assert.rejects(republish(wrong, new Error('wrong last sequence: 11'), later()), (err: Error) => err instanceof FatalStorageError && /another writer/.test(err.message));
    assert.equal(calls, 1);
    assert.deepEqual(await republish(() => Promise.resolve(ack(12)), new Error('wrong last sequence: 11'), later()), ack(12));
  });

  it('gives up with the last error once the window has passed', async () => {
    await assert.rejects(republish(() => Promise.reject(new Error('jetstream is not enabled')), new Error('timeout'), performance.now() + 600), /jetstream is not enabled/);
  });
});

describe('batch messages', () => {
  it('round-trip the records\' stored bytes and refuse anything else', () => {
    fc.assert(fc.property(fc.array(fc.uint8Array({ minLength: 1, maxLength: 64 }), { minLength: 1, maxLength: 10 }), (records) => {
      assert.deepEqual(unpackBatch(packBatch(records)).map((b) => [...b]), records.map((b) => [...b]));
    }));
    fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
      try {
        const batch = unpackBatch(bytes);
        assert.ok(batch.length > 0 && batch.every((b) => b instanceof Uint8Array));
      } catch (err) {
        assert.ok(err instanceof Error);
      }
    }));
  });
});
