import { asInstanceRecord } from '../../events/read.js';
import { eventsCarried } from '../../events/record-types.js';
import type { NormalizedEvent } from '../../events/normalized-event.js';
import type { Actor, LogRecord } from '../../kernel/record.js';
import type { ExportDestination } from './config.js';

/** One delivered item: a fact of the log as a destination receives it. */
export interface ExportItem {
  /**
   * `<origin>/<seq>/<place>`, `place` the item's place in the record itself (before any
   * destination's filter): the same item has the same id on every destination, under any filter,
   * across retries and restarts, and two different items never share one; receivers deduplicate by it.
   */
  readonly id: string;
  readonly seq: number;
  readonly type: string;
  /** When the record was appended. */
  readonly at: string;
  /** Who caused it (a reviewer, an ingestor), when a principal did. */
  readonly actor?: Actor;
  readonly data: unknown;
}

/** Record types a destination carrying `alerts` or `incidents` receives, and the item type each becomes. */
const ALERT_ITEMS: Readonly<Record<string, string>> = {
  AlertRaised: 'alert.raised',
  AlertEvidenceAdded: 'alert.grown',
  AlertReviewed: 'alert.reviewed',
  AlertAssigned: 'alert.assigned',
  AlertNoteAdded: 'alert.note_added',
};
const INCIDENT_ITEMS: Readonly<Record<string, string>> = {
  IncidentOpened: 'incident.opened',
  IncidentAlertsAdded: 'incident.alerts_added',
  IncidentStatusChanged: 'incident.status_changed',
  IncidentAssigned: 'incident.assigned',
  IncidentMerged: 'incident.merged',
};

/** An item before it is named: `place` is its place in the record, whatever a destination's filter leaves out. */
interface Picked {
  readonly place: number;
  readonly type: string;
  readonly data: unknown;
}

/** A bulk review leaves as one `alert.reviewed` per alert, as if each had been reviewed alone (marked `bulk`). */
function bulkReviewItems(record: LogRecord): Picked[] {
  const known = asInstanceRecord(record);
  if (known?.type !== 'AlertsBulkReviewed') return [];
  const { reviews, to, disposition, reason, principal, authentication } = known.data;
  return reviews.map((r, place) => ({
    place,
    type: 'alert.reviewed',
    data: {
      alertId: r.alertId,
      from: r.from,
      to,
      reason,
      principal,
      authentication,
      ...(disposition !== undefined ? { disposition } : {}),
      bulk: true,
    },
  }));
}

type Filter = Pick<ExportDestination, 'carries' | 'events' | 'includeRaw'>;

function wanted(event: NormalizedEvent, f: Filter): boolean {
  const ev = f.events;
  if (ev?.adapters ? !ev.adapters.includes(event.source.adapter) : event.source.adapter === 'vigil') return false;
  if (ev?.categories && !(ev.categories as readonly string[]).includes(event.category)) return false;
  return !(ev?.classes && !ev.classes.includes(event.class));
}

/** An event as it leaves: without `rawReference` unless the destination asked for raw evidence. */
function outgoing(event: NormalizedEvent, includeRaw: boolean): NormalizedEvent {
  if (includeRaw || !('rawReference' in event)) return event;
  const { rawReference: _dropped, ...rest } = event;
  return rest;
}

function evidenceItems(record: LogRecord, f: Filter): Picked[] {
  const known = asInstanceRecord(record);
  if (!known) return [];
  // Vigil's own detectable facts (access, refusals, export state) are audit, not evidence: they
  // leave only when the filter names the `vigil` adapter. An event keeps its place in the record
  // (not its place among what the filter kept), and the raw item comes after every event.
  const carried = eventsCarried(known);
  const events: Picked[] = carried.flatMap((e, place) =>
    wanted(e, f) ? [{ place, type: 'event', data: outgoing(e, f.includeRaw) }] : [],
  );
  if (f.includeRaw && known.type === 'RawRecordsIngested' && events.length > 0) {
    const { normalizer, logType, records } = known.data;
    events.push({
      place: carried.length,
      type: 'raw',
      data: { normalizer, ...(logType !== undefined ? { logType } : {}), records },
    });
  }
  return events;
}

/**
 * The items one log record becomes for one destination, in order (pure). Alerts carry their match
 * reason and evidence references (never raw records); reviews carry the reviewer; normalized
 * events lose `rawReference`, and raw records are sent, only as `includeRaw` says.
 */
export function exportItems(record: LogRecord, f: Filter, origin: string): ExportItem[] {
  const picked: Picked[] = [];
  const alertType = ALERT_ITEMS[record.type];
  const incidentType = INCIDENT_ITEMS[record.type];
  if (alertType !== undefined && f.carries.includes('alerts'))
    picked.push({ place: 0, type: alertType, data: record.data });
  else if (record.type === 'AlertsBulkReviewed' && f.carries.includes('alerts'))
    picked.push(...bulkReviewItems(record));
  else if (incidentType !== undefined && f.carries.includes('incidents'))
    picked.push({ place: 0, type: incidentType, data: record.data });
  else if (f.carries.includes('events')) picked.push(...evidenceItems(record, f));
  return picked.map((p) => ({
    id: `${origin}/${record.seq}/${p.place}`,
    seq: record.seq,
    type: p.type,
    at: record.at,
    ...(record.actor ? { actor: record.actor } : {}),
    data: p.data,
  }));
}
