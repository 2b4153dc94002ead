import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openInstanceStore } from '../../src/instance/open.js';
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
      await inst.readSide.halt(120_000);
      assert.ok(performance.now() - asked < 120_000, 'the worker answered the halt');

      await inst.writer.record([{ type: RecordType.EventsIngested, data: { events: [makeEvent({ id: 'after-halt' })] } }], { now: NOW });
      assert.ok(inst.log.head().seq > folded, 'the writer appends after the halt');
      await assert.rejects(inst.readYourWrites(500), { name: 'ReadSideLagging' });
      assert.equal(inst.readSide.applied(), folded, 'the halted worker folds nothing more');
    } finally {
      await inst.close();
      dir.cleanup();
    }
  });
});
