import { accept, type CommandContext, type Decision } from './decision.js';
import { eventOf } from '../events/union.js';
import type { NormalizedEvent } from '../events/normalized-event.js';
import type { ExportDestinationSummary, ExportsState } from '../projections/exports.js';

/** A destination's observed delivery state, as the exporter reports it. */
export interface ExportObservation {
  readonly destination: string;
  readonly kind: string;
  readonly state: 'failing' | 'delivering';
  readonly reason: string;
  readonly lagRecords: number;
  readonly lastSuccessAt?: string;
}

const same = (a: readonly ExportDestinationSummary[] | undefined, b: readonly ExportDestinationSummary[]) =>
  JSON.stringify(a ?? []) === JSON.stringify(b);

/**
 * Records the export configuration in force when it differs from the last one recorded (the
 * first start with none configured records nothing: nothing was ever enabled).
 */
export function decideExportConfiguration(
  s: ExportsState,
  destinations: readonly ExportDestinationSummary[],
): Decision<{ changed: boolean }> {
  if (same(s.configuration, destinations) || (s.configuration === undefined && destinations.length === 0))
    return accept([], { changed: false });
  return accept([eventOf('ExportConfigurationRecorded', { destinations: [...destinations] })], { changed: true });
}

/** The detectable event of a state change: product `vigil`, service `export`. */
function stateEvent(o: ExportObservation, ctx: CommandContext): NormalizedEvent {
  return {
    schemaVersion: 1,
    id: `vigil:export:${o.destination}:${o.state}:${ctx.now}`,
    category: 'health',
    class: 'export',
    activity: o.state === 'failing' ? 'destination_failing' : 'destination_delivering',
    outcome: o.state === 'failing' ? 'failure' : 'success',
    time: ctx.now,
    ingestedAt: ctx.now,
    severity: o.state === 'failing' ? 6 : 1,
    source: { adapter: 'vigil', instance: 'export', recordId: `${o.destination}:${o.state}:${ctx.now}` },
    entityKeys: [`service:vigil-export:${o.destination}`],
    service: { name: 'vigil-export' },
    attributes: {
      destination: o.destination,
      destination_kind: o.kind,
      state: o.state,
      reason: o.reason,
      lag_records: o.lagRecords,
      ...(o.lastSuccessAt !== undefined ? { last_success_at: o.lastSuccessAt } : {}),
    },
  };
}

/** Records that a destination became failing or delivers again; nothing when the log already says so. */
export function decideExportState(
  s: ExportsState,
  o: ExportObservation,
  ctx: CommandContext,
): Decision<{ changed: boolean }> {
  if ((o.state === 'failing') === s.failing.has(o.destination)) return accept([], { changed: false });
  return accept(
    [
      eventOf('ExportDestinationStateChanged', {
        event: stateEvent(o, ctx),
        destination: o.destination,
        state: o.state,
        reason: o.reason,
        lagRecords: o.lagRecords,
        ...(o.lastSuccessAt !== undefined ? { lastSuccessAt: o.lastSuccessAt } : {}),
      }),
    ],
    { changed: true },
  );
}

/** Records that a destination's items up to `seq` were delivered; nothing when the log already says as much. */
export function decideExportCursor(s: ExportsState, destination: string, seq: number): Decision<{ changed: boolean }> {
  if (seq <= (s.cursors.get(destination) ?? 0)) return accept([], { changed: false });
  return accept([eventOf('ExportCursorRecorded', { destination, seq })], { changed: true });
}
