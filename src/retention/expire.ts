import { join } from 'node:path';
import type { Database } from 'lmdb';
import type { CommandContext } from '../commands/decision.js';
import type { Writer } from '../commands/writer.js';
import { eventsOfRecord } from '../events/record-types.js';
import { eventOf } from '../events/union.js';
import type { LmdbEventLog } from '../log/lmdb-log.js';
import { decodeRecord, hashBytes, type LogRecord } from '../log/record.js';
import { frontierText } from '../log/merkle-tree.js';
import type { CollectorsState } from '../projections/collectors.js';
import type { AlertsState } from '../projections/alerts.js';
import { EVIDENCE_DBS, decodeStored } from '../projections/evidence.js';
import { ARCHIVE_FORMAT, archiveName, writeArchive, writeArchiveOffThread } from './archive.js';
import type { CarriedIndex } from './carried.js';
import { retentionDays, shortestDays } from './kinds.js';
import { asRecord, expiredBefore, expiringSegments, segmentFate, type SegmentRecord } from './plan.js';
import type { RetentionSettings } from './settings.js';

/** What an expiry needs: the log, the single writer, the carried records and the checkpoints. */
export interface ExpiryDeps {
  readonly log: LmdbEventLog;
  readonly writer: Writer;
  readonly carried: CarriedIndex;
  /** Makes a checkpoint at the committed head when it grew, and reads the stored ones. */
  readonly checkpoints: { make(): Promise<string | undefined>; checkpoint(size?: number): string | undefined; committedSize(): number };
  /** The log's origin (its checkpoint key's name). */
  readonly origin: string;
  readonly settings: RetentionSettings;
  /** Where archive files go. */
  readonly archiveDir: string;
  /** The store's folder: archives are written by a worker thread that reads it (default: on this thread). */
  readonly storePath?: string;
  /** The last seq every export destination has delivered: nothing past it expires (default: no bound). */
  readonly delivered?: () => number;
  /** A JetStream node's name, added to its archives' file names (archive.ts). */
  readonly node?: string;
  /** Whether this node may expire (a JetStream node: only while it leads; default: always). */
  readonly leads?: () => boolean;
  /** Run before each expiry: a JetStream leader completes the purge of a cut its predecessor recorded. */
  readonly beforeRun?: () => Promise<void>;
}

/** One segment expired: its range and archive. */
export interface ExpiredSegment {
  readonly fromSeq: number;
  readonly toSeq: number;
  readonly file: string;
  readonly carried: number;
  readonly dropped: number;
}

/** Segments expired in one run at most (the next run takes the rest). */
const MAX_SEGMENTS_PER_RUN = 16;

/** The archive directory a configuration means (default `<storage.path>/archive`). */
export function archiveDirOf(settings: RetentionSettings, storePath: string): string {
  return settings.archiveDir ?? join(storePath, 'archive');
}

/**
 * Expires every whole segment whose newest record is older than the shortest retention at
 * `ctx.now` (docs/log.md, "Retention"), one segment at a time: the segment is archived first (its
 * records in export format and a signed checkpoint covering them, fsynced), then one transaction
 * of the single writer appends the records carried forward and the cut, and removes the segment
 * from the live store with its evidence index entries. A crash before that transaction leaves the
 * old state (and an archive the next run writes again), after it the new one.
 */
export async function expireSegments(deps: ExpiryDeps, ctx: CommandContext): Promise<ExpiredSegment[]> {
  const { log, settings } = deps;
  const days = retentionDays(settings);
  const shortest = shortestDays(days);
  if (!settings.enabled || shortest === undefined || deps.leads?.() === false) return [];
  await deps.beforeRun?.();
  const before = expiredBefore(ctx.now, shortest);
  const atOf = (seq: number) => { for (const r of log.read(seq, seq)) return r.at; return undefined; };
  const done: ExpiredSegment[] = [];
  for (;;) {
    const committed = Math.min(deps.checkpoints.committedSize(), deps.delivered?.() ?? Infinity);
    const [segment] = expiringSegments(log.first(), committed, settings.segmentRecords, atOf, before, 1);
    if (!segment || done.length >= MAX_SEGMENTS_PER_RUN || deps.leads?.() === false) return done;
    done.push(await expireSegment(deps, segment, before, ctx));
  }
}

async function expireSegment(deps: ExpiryDeps, { from, to }: { from: number; to: number }, before: string, ctx: CommandContext): Promise<ExpiredSegment> {
  const { log, writer, settings } = deps;
  await deps.checkpoints.make();
  const checkpoint = deps.checkpoints.checkpoint();
  const checkpointSize = Number(checkpoint?.split('\n')[1]);
  if (!checkpoint || !(checkpointSize >= to)) throw new Error(`no signed checkpoint covers record ${to} yet`);
  const raw = [...log.readRaw(from, to)];
  if (raw.length !== to - from + 1) throw new Error(`records ${from}..${to} are not all in the live store`);
  const records: Array<SegmentRecord & { bytes: Uint8Array }> = raw.map(({ bytes }) => ({ record: decodeRecord(bytes), hash: hashBytes(bytes), bytes }));
  const file = archiveName(from, to, deps.node);
  const header = { archive: ARCHIVE_FORMAT, origin: deps.origin, fromSeq: from, toSeq: to, prevHash: records[0]!.record.prev, checkpoint, checkpointSize } as const;
  const digest = deps.storePath !== undefined
    ? await writeArchiveOffThread(deps.storePath, deps.archiveDir, file, header)
    : await writeArchive(deps.archiveDir, file, header, records);
  // Decided now, in the same turn the writer stages it: nothing can change the models in between.
  const collectors = writer.models.state<CollectorsState>('collectors');
  const latest = (r: LogRecord) => {
    const d = r.data as { collectorId: string; epoch: number; sequence: number };
    const c = collectors.collectors.get(d.collectorId);
    return c !== undefined && c.epoch === d.epoch && c.lastSequence === d.sequence;
  };
  const fate = segmentFate(records, retentionDays(settings), ctx.now, latest);
  const alertEvidence = archivedAlertEvidence(writer.models.state<AlertsState>('alerts'), fate.dropped);
  const cut = { firstSeq: to + 1, prevHash: records.at(-1)!.hash, treeRoot: Buffer.from(log.tree.root(to)).toString('base64') };
  const treeFrontier = frontierText(log.tree.frontierAt(to));
  const evidence = writer.models.db<Uint8Array>(EVIDENCE_DBS.byId) as unknown as Database<Uint8Array, string>;
  const events = [
    ...(fate.carried.length > 0 ? [eventOf('RecordsCarriedForward', { records: [...fate.carried] })] : []),
    eventOf('LogSegmentsExpired', {
      ...cut, before, carried: fate.carried.length, dropped: fate.dropped.length, treeFrontier,
      archives: [{ file, fromSeq: from, toSeq: to, digest, checkpointSize, ...(alertEvidence.length > 0 ? { alertEvidence } : {}) }],
    }),
  ];
  // After the cut, the live store's carried records are those carried earlier by records it keeps, and these.
  const judged = new Set([...fate.carried.map((c) => c.seq), ...fate.dropped.map((r) => r.seq)]);
  const carried = [...deps.carried.all().filter((r) => !judged.has(r.seq)), ...fate.carried.map(asRecord)].sort((a, b) => a.seq - b.seq);
  await writer.cut(events, ctx, {
    at: cut,
    carried,
    inTransaction(recs) {
      deps.carried.write(fate.carried.length > 0 ? recs[0]!.seq : undefined, fate.carried, fate.dropped);
      forgetDroppedEvidence(evidence, fate.dropped);
    },
  });
  return { fromSeq: from, toSeq: to, file, carried: fate.carried.length, dropped: fate.dropped.length };
}

/**
 * The evidence index forgets the events that left with their records (not re-sent copies stored
 * with a later record): inside the transaction of a cut, on the leader and on every copy.
 */
export function forgetDroppedEvidence(evidence: Database<Uint8Array, string>, dropped: readonly LogRecord[]): void {
  for (const r of dropped) {
    for (const e of eventsOfRecord(r)) {
      const at = evidence.get(e.id);
      if (at && decodeStored(at).seq === r.seq) evidence.removeSync(e.id);
    }
  }
}

/** The alerts whose evidence leaves with the dropped records, and which of it. */
function archivedAlertEvidence(alerts: AlertsState, dropped: readonly LogRecord[]): Array<{ alertId: string; eventIds: string[] }> {
  const leaving = new Set<string>();
  for (const r of dropped) for (const e of eventsOfRecord(r)) leaving.add(e.id);
  if (leaving.size === 0) return [];
  const out: Array<{ alertId: string; eventIds: string[] }> = [];
  for (const a of alerts.alerts.values()) {
    const eventIds = a.evidence.map((ref) => ref.eventId).filter((id) => leaving.has(id));
    if (eventIds.length > 0) out.push({ alertId: a.id, eventIds });
  }
  return out;
}
