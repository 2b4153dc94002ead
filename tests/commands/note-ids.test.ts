import { it } from 'node:test';
import assert from 'node:assert/strict';
import { decideAddAlertNote } from '../../src/commands/add-alert-note.js';
import { eventOf } from '../../src/events/union.js';
import { memoryModels } from '../helpers/decider-spec.js';
import { alertRaised } from '../helpers/event-fixtures.js';

const note = (noteId: string) => eventOf('AlertNoteAdded', { alertId: 'alr_1', noteId, text: noteId, principal: 'analyst-user', authentication: 'bearer' });
const ctx = { now: '2026-11-22T12:00:00.000Z', actor: { id: 'analyst-user', authentication: 'bearer' } };

it('a note id is never given twice, even once older notes of the alert have expired (retention.reviewsDays < alertsDays)', () => {
  // The alert's AlertRaised is still kept; notes n1 and n2 expired with their segment, n3 was carried forward.
  const m = memoryModels();
  m.append([alertRaised(), note('n3')]);
  const ids: string[] = [];
  for (let i = 0; i < 2; i++) {
    const d = decideAddAlertNote(m.alerts, 'alr_1', { text: 'later' }, ctx);
    assert.ok(d.ok);
    ids.push(d.result.noteId);
    m.append(d.events as never);
  }
  const all = m.alerts.alerts.get('alr_1')!.notes.map((n) => n.noteId);
  assert.equal(new Set(all).size, all.length, 'note ids are unique');
});
