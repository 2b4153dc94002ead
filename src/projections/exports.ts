import { exhaustive } from '../events/read.js';
import type { EventData } from '../events/union.js';
import { instanceProjection } from './types.js';

/** One recorded destination summary. */
export type ExportDestinationSummary = EventData<'ExportConfigurationRecorded'>['destinations'][number];

/** What the log says of export: the configuration last recorded, and which destinations are failing. */
export interface ExportsState {
  /** The destinations of the last `ExportConfigurationRecorded` (none before any). */
  configuration: ExportDestinationSummary[] | undefined;
  /** Destination name -> the `at` of the record that marked it failing. */
  failing: Map<string, string>;
  /** Destination name -> the last `ExportCursorRecorded` seq (a JetStream cluster's delivery cursor). */
  cursors: Map<string, number>;
}

/** Folds the export configuration in force and the failing destinations. */
export const exportsProjection = instanceProjection({
  name: 'exports',
  version: 2,
  folds: ['ExportConfigurationRecorded', 'ExportDestinationStateChanged', 'ExportCursorRecorded'],
  initial: (): ExportsState => ({ configuration: undefined, failing: new Map(), cursors: new Map() }),
  evolve(s, record) {
    switch (record.type) {
      case 'ExportConfigurationRecorded':
        s.configuration = [...record.data.destinations];
        return s;
      case 'ExportDestinationStateChanged':
        if (record.data.state === 'failing') s.failing.set(record.data.destination, record.at);
        else s.failing.delete(record.data.destination);
        return s;
      case 'ExportCursorRecorded':
        s.cursors.set(record.data.destination, Math.max(record.data.seq, s.cursors.get(record.data.destination) ?? 0));
        return s;
      default:
        return exhaustive(record, s);
    }
  },
  snapshot: (s) => ({ configuration: s.configuration ?? null, failing: [...s.failing], cursors: [...s.cursors] }),
  restore: (data) => {
    const d = data as {
      configuration: ExportDestinationSummary[] | null;
      failing: Array<[string, string]>;
      cursors?: Array<[string, number]>;
    };
    return {
      configuration: d.configuration ?? undefined,
      failing: new Map(d.failing),
      cursors: new Map(d.cursors ?? []),
    };
  },
});
