import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { decideIngestEvents } from '../../src/commands/ingest-events.js';
import type { NormalizedEvent } from '../../src/events/normalized-event.js';
import { openInstanceStore, type InstanceStore } from '../../src/cli/instance/open.js';
import { decodeRecord, encodeRecord, keptRecord } from '../../src/log/record.js';
import { normalizedEvent } from '../helpers/event-fixtures.js';
import { tempDir } from '../helpers/temp.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Stages the batch `held` hands over (and lets go of) through the writer. */
function stageBatch(inst: InstanceStore, held: { events?: NormalizedEvent[] }) {
  const events = held.events!;
  delete held.events;
  // As the events route decides when it answers with the body's own bytes: the result keeps no events.
  return inst.writer.execute((m) => {
    const d = decideIngestEvents(m, events);
    return d.ok ? { ...d, result: { ...d.result, accepted: [] } } : d;
  }, { now: '2026-12-01T12:00:00.000Z' });
}

describe('records kept until their batch is durable', () => {
  it('a large record reads its data back from its bytes, a small one is kept as it is', () => {
    const large = { seq: 7, at: '2026-12-01T12:00:00.000Z', type: 'EventsIngested', prev: '0'.repeat(64), actor: { id: 'a', authentication: 'token' }, data: { events: Array.from({ length: 100 }, (_, i) => normalizedEvent({ id: `e-${i}` })) } };
    const bytes = encodeRecord(large);
    const kept = keptRecord(large, bytes);
    assert.notEqual(kept, large);
    assert.deepStrictEqual(kept, decodeRecord(bytes));
    assert.equal(kept.data, kept.data, 'decoded once');
    const small = { ...large, data: { events: [] } };
    assert.equal(keptRecord(small, encodeRecord(small)), small);
  });

  it('nothing holds a staged batch\'s events while it is on its way to disk, and its outcome reads them back', async () => {
    const dir = tempDir();
    const inst = await openInstanceStore(join(dir.path, 'store'));
    try {
      const held: { events?: NormalizedEvent[] } = { events: Array.from({ length: 200 }, (_, i) => normalizedEvent({ id: `kept-${i}` })) };
      const first = new WeakRef(held.events![0]!);
      // A WeakRef's target lives to the end of the job that made it: the batch is staged in the next.
      await new Promise((r) => setImmediate(r));
      const outcome = stageBatch(inst, held);
      // The commit has not run yet (it waits for the event loop): everything that waits for it is there.
      gc();
      assert.equal(first.deref(), undefined, 'the parsed events are collectable before the batch is durable');
      const done = await outcome;
      assert.ok(done.ok);
      const [record] = done.records;
      assert.equal((record!.data as { events: NormalizedEvent[] }).events.length, 200);
      assert.equal((record!.data as { events: NormalizedEvent[] }).events[0]!.id, 'kept-0');
      // A staged record read back by a decider (a retry of the same batch) is the stored one.
      assert.deepStrictEqual(inst.writer.models.record(record!.seq), record);
    } finally {
      await inst.close();
      dir.cleanup();
    }
  });
});
