import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { NOTES_PER_ALERT, decideAddAlertNote } from '../../src/commands/add-alert-note.js';
import type { CommandContext } from '../../src/commands/decision.js';
import { eventOf } from '../../src/events/union.js';
import type { AlertsState } from '../../src/projections/alerts.js';
import { alertTimeline } from '../../src/projections/alerts-query.js';
import { spec } from '../helpers/decider-spec.js';
import { alertRaised, alertReviewed } from '../helpers/event-fixtures.js';

const analyst: CommandContext = { now: '2026-11-22T12:00:00.000Z', actor: { id: 'ana', authentication: 'mesh' } };
type Note = { alertId?: string; text: string; ctx?: CommandContext };
const addNote = spec((m, c: Note) => decideAddAlertNote(m.alerts, c.alertId ?? 'alr_1', { text: c.text }, c.ctx ?? analyst));
const noted = (noteId: string, text: string) => eventOf('AlertNoteAdded', { alertId: 'alr_1', noteId, text, principal: 'ana', authentication: 'mesh' });

describe('decideAddAlertNote', () => {
  it('adds a note with its author and how they authenticated, numbered in the alert', () => {
    addNote.given([alertRaised()]).when({ text: 'user confirmed the login' }).then([noted('n1', 'user confirmed the login')], { alertId: 'alr_1', noteId: 'n1' });
  });

  it('numbers a later note after the ones before it, and the timeline keeps log order with the reviews', () => {
    const { models } = addNote.given([alertRaised(), noted('n1', 'first'), alertReviewed('alr_1', 'open', 'in_review')]).when({ text: 'second' })
      .then([noted('n2', 'second')]);
    const alert = models.alerts.alerts.get('alr_1')!;
    assert.deepEqual(alertTimeline(alert).map((e) => e.kind), ['note', 'review', 'note']);
  });

  it('refuses an alert that does not exist as not found', () => {
    addNote.given([]).when({ text: 'x' }).thenRejects('not_found', /alr_1/);
  });

  it('refuses a note without an authenticated principal', () => {
    addNote.given([alertRaised()]).when({ text: 'x', ctx: { now: analyst.now } }).thenRejects('unauthenticated');
  });

  it(`refuses a note past the ${NOTES_PER_ALERT} one alert keeps`, () => {
    const full = Array.from({ length: NOTES_PER_ALERT }, (_, i) => noted(`n${i + 1}`, 'x'));
    addNote.given([alertRaised(), ...full]).when({ text: 'one more' }).thenRejects('too_large', /1000 notes/);
  });
});
