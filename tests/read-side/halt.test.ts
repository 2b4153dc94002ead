import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openInstanceStore } from '../../src/cli/instance/open.js';
import { openReadFold, type LogReader } from '../../src/projections/read-side/read-fold.js';
import { readProjections } from '../../src/projections/all.js';
import type { LogRecord } from '../../src/kernel/record.js';
import { RecordType } from '../../src/events/record-types.js';
import { makeEvent } from '../helpers/instance.js';
import { tempDir } from '../helpers/temp.js';

const NOW = '2026-11-25T05:00:00.000Z';

describe('the read side halted before a storage failure\'s exit', () => {
  it('answers between two folds and folds nothing after, while the writer goes on; closing still works', async () => {
    const dir = tempDir();
    const inst = await openInstanceStore(join(dir.path, 'store'));
    try {
      await inst.writer.record([{ type: RecordType.EventsIngested, data: { events: [makeEvent({ id: 'before-halt' })] } }], { now: NOW });
      await inst.readYourWrites(10_000);
      const folded = inst.readSide.applied();
      assert.equal(folded, inst.log.head().seq);

      // A timeout far past any fold: the halt resolves by the worker's answer, not by the timer.
      const asked = performance.now();
      assert.equal(await inst.readSide.halt(120_000), true, 'the worker answered the halt');
      assert.ok(performance.now() - asked < 120_000);

      await inst.writer.record([{ type: RecordType.EventsIngested, data: { events: [makeEvent({ id: 'after-halt' })] } }], { now: NOW });
      assert.ok(inst.log.head().seq > folded, 'the writer appends after the halt');
      await assert.rejects(inst.readYourWrites(500), { name: 'ReadSideLagging' });
      assert.equal(inst.readSide.applied(), folded, 'the halted worker folds nothing more');
    } finally {
      await inst.close();
      dir.cleanup();
    }
  });

  it('counts a worker that has exited as halted, and refuses what would wait for it', { timeout: 20_000 }, async () => {
    const dir = tempDir();
    const inst = await openInstanceStore(join(dir.path, 'store'));
    try {
      await inst.close();
      // A timeout past the test's own: the halt resolves because the worker is gone.
      assert.equal(await inst.readSide.halt(60_000), true);
      await assert.rejects(inst.readSide.settle(), /worker has exited/);
    } finally {
      dir.cleanup();
    }
  });

  it('stops folding between two transactions once halted, however far behind it is', async () => {
    const dir = tempDir();
    const records: LogRecord[] = Array.from({ length: 50 }, (_, i) => ({ seq: i + 1, at: NOW, type: RecordType.EventsIngested, prev: '0'.repeat(64), data: { events: [makeEvent({ id: `fold-${i}` })] } }));
    const log: LogReader = { *read(from, to) { for (const r of records) if (r.seq >= from && r.seq <= to) yield r; }, head: () => ({ seq: records.length }) };
    // Asked before each transaction: the first two go ahead, then the flag is up.
    let asked = 0;
    let halted = true;
    const fold = openReadFold(join(dir.path, 'store'), log, readProjections(), { chunk: 10, halted: () => asked++ >= 2 && halted });
    try {
      assert.equal(fold.catchUp(50), 20, 'two transactions of ten records, then none');
      assert.equal(fold.applied(), 20);
      halted = false;
      assert.equal(fold.catchUp(50), 30, 'the rest once no longer halted');
    } finally {
      await fold.close();
      dir.cleanup();
    }
  });
});
