import * as v from 'valibot';
import { DetectionRecord, type AlertNoteAdded } from '../events/detection-records.js';
import type { AlertsState } from '../projections/alerts.js';
import { accept, reject, type CommandContext, type Decision } from './decision.js';

/** At most this many notes on one alert (a bound on what one alert's detail carries). */
export const NOTES_PER_ALERT = 1000;

/** Body of `POST /api/v1/alerts/{alertId}/notes`: free text, 1..8192 characters after trimming. */
export const AddAlertNoteBody = v.strictObject({
  text: v.pipe(v.string(), v.trim(), v.minLength(1, 'a note needs text'), v.maxLength(8192)),
});

/** The answer of a note: its alert and id. */
export interface NoteResult {
  alertId: string;
  noteId: string;
}

/** Decides adding a note to an alert; the note's id is one past the highest the alert has (`n1`, `n2`, ...). */
export function decideAddAlertNote(
  alerts: AlertsState,
  alertId: string,
  body: v.InferOutput<typeof AddAlertNoteBody>,
  ctx: CommandContext,
): Decision<NoteResult> {
  const alert = alerts.alerts.get(alertId);
  if (!alert) return reject('not_found', `alert ${alertId} does not exist`);
  if (!ctx.actor) return reject('unauthenticated', 'a note needs an authenticated principal');
  if (alert.notes.length >= NOTES_PER_ALERT)
    return reject('too_large', `alert ${alertId} already has ${NOTES_PER_ALERT} notes, the most one alert keeps`);
  // One past the highest id given so far: the count alone repeats an id once older notes have expired (retention).
  const noteId = `n${alert.notes.reduce((n, x) => Math.max(n, Number(x.noteId.slice(1)) || 0), 0) + 1}`;
  const data: AlertNoteAdded = {
    alertId,
    noteId,
    text: body.text,
    principal: ctx.actor.id,
    authentication: ctx.actor.authentication,
  };
  return accept([{ type: DetectionRecord.AlertNoteAdded, data }], { alertId, noteId });
}
