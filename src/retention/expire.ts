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
/** Records one cut removes at most: due segments are expired together up to it (at least one each cut). */
const MAX_RECORDS_PER_CUT = 65_536;

/** The archive directory a configuration means (default `<storage.path>/archive`). */
export function archiveDirOf(settings: RetentionSettings, storePath: string): string {
  return settings.archiveDir ?? join(storePath, 'archive');
}

/**
 * Expires every whole segment whose newest record is older than the shortest retention at
 * `ctx.now` (docs/log.md, "Retention"). Segments due together are expired by one cut (as many as
 * fit in `MAX_RECORDS_PER_CUT` records, at least one), so the read models are refolded once for
 * them: each segment is archived first (its records in export format and a signed checkpoint
 * covering them, fsynced), then one transaction of the single writer appends the records carried
 * forward and the cut, and removes the segments from the live store with their evidence index
 * entries. A crash before that transaction leaves the old state (and archives the next run writes
 * again), after it the new one.
 */
export async function expireSegments(deps: ExpiryDeps, ctx: CommandContext): Promise<ExpiredSegment[]> {
  const { log, settings } = deps;
  const days = retentionDays(settings);
  const shortest = shortestDays(days);
  if (!settings.enabled || shortest === undefined || deps.leads?.() === false) return [];
  await deps.beforeRun?.();
  const before = expiredBefore(ctx.now, shortest);
  const atOf = (seq: number) => { for (const r of log.read(seq, seq)) return r.at; return undefined; };
  const perCut = Math.max(1, Math.floor(MAX_RECORDS_PER_CUT / settings.segmentRecords));
  const done: ExpiredSegment[] = [];
  for (;;) {
    const committed = Math.min(deps.checkpoints.committedSize(), deps.delivered?.() ?? Infinity);
    const segments = expiringSegments(log.first(), committed, settings.segmentRecords, atOf, before, Math.min(perCut, MAX_SEGMENTS_PER_RUN - done.length));
    if (segments.length === 0 || deps.leads?.() === false) return done;
    done.push(...await expireTogether(deps, segments, before, ctx));
  }
}

/** One segment read for expiry: its range and its records (decoded, hashed, and as stored). */
interface Expiring {
  readonly from: number;
  readonly to: number;
  readonly records: Array<SegmentRecord & { bytes: Uint8Array }>;
}

/** Records decoded between two turns of the writer's thread while a segment is read. */
const DECODE_SLICE = 256;

/**
 * A segment's records, decoded and hashed on the writer's thread in slices with a turn for the
 * writer between them: a run of 16 segments is hundreds of thousands of events, seconds of work
 * that would otherwise hold every ingest request for as long.
 */
async function readSegment(log: LmdbEventLog, from: number, to: number): Promise<Expiring['records']> {
  const records: Expiring['records'] = [];
  for (let at = from; at <= to; at += DECODE_SLICE) {
    for (const { bytes } of log.readRaw(at, Math.min(to, at + DECODE_SLICE - 1))) records.push({ record: decodeRecord(bytes), hash: hashBytes(bytes), bytes });
    await new Promise((r) => setImmediate(r));
  }
  if (records.length !== to - from + 1) throw new Error(`records ${from}..${to} are not all in the live store`);
  return records;
}

/** Expires consecutive `segments` by one cut: archives each, then one transaction. */
async function expireTogether(deps: ExpiryDeps, segments: ReadonlyArray<{ from: number; to: number }>, before: string, ctx: CommandContext): Promise<ExpiredSegment[]> {
  const { log, writer, settings } = deps;
  const last = segments.at(-1)!.to;
  await deps.checkpoints.make();
  const checkpoint = deps.checkpoints.checkpoint();
  const checkpointSize = Number(checkpoint?.split('\n')[1]);
  if (!checkpoint || !(checkpointSize >= last)) throw new Error(`no signed checkpoint covers record ${last} yet`);
  const read: Expiring[] = [];
  for (const { from, to } of segments) read.push({ from, to, records: await readSegment(log, from, to) });
  const archived: Array<{ file: string; digest: string }> = [];
  for (const { from, to, records } of read) {
    const file = archiveName(from, to, deps.node);
    const header = { archive: ARCHIVE_FORMAT, origin: deps.origin, fromSeq: from, toSeq: to, prevHash: records[0]!.record.prev, checkpoint, checkpointSize } as const;
    const digest = deps.storePath !== undefined
      ? await writeArchiveOffThread(deps.storePath, deps.archiveDir, file, header)
      : await writeArchive(deps.archiveDir, file, header, records);
    archived.push({ file, digest });
  }
  const latest = (r: LogRecord) => {
    const d = r.data as { collectorId: string; epoch: number; sequence: number };
    const c = writer.models.state<CollectorsState>('collectors').collectors.get(d.collectorId);
    return c !== undefined && c.epoch === d.epoch && c.lastSequence === d.sequence;
  };
  const fatesNow = () => read.map(({ records }) => segmentFate(records, retentionDays(settings), ctx.now, latest));
  // The evidence index entries that leave with the dropped records, looked up a slice per turn
  // before the cut: inside its transaction they are only removed. A record judged dropped now
  // stays dropped (a submission stops being its collector's latest, never the reverse).
  const evidence = writer.models.db<Uint8Array>(EVIDENCE_DBS.byId) as unknown as Database<Uint8Array, string>;
  const forget = new Map<number, string[]>();
  for (const r of fatesNow().flatMap((f) => f.dropped)) {
    forget.set(r.seq, [...droppedEvidenceIds(evidence, [r])]);
    if (forget.size % 64 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  // Decided now, in the same turn the writer stages it: nothing can change the models in between.
  const alerts = writer.models.state<AlertsState>('alerts');
  const fates = fatesNow();
  const carriedNow = fates.flatMap((f) => f.carried);
  const droppedNow = fates.flatMap((f) => f.dropped);
  for (const r of droppedNow) if (!forget.has(r.seq)) forget.set(r.seq, [...droppedEvidenceIds(evidence, [r])]);
  const lastRecords = read.at(-1)!.records;
  const cut = { firstSeq: last + 1, prevHash: lastRecords.at(-1)!.hash, treeRoot: Buffer.from(log.tree.root(last)).toString('base64') };
  const treeFrontier = frontierText(log.tree.frontierAt(last));
  const archives = read.map(({ from, to }, i) => {
    const alertEvidence = archivedAlertEvidence(alerts, fates[i]!.dropped);
    return { file: archived[i]!.file, fromSeq: from, toSeq: to, digest: archived[i]!.digest, checkpointSize, ...(alertEvidence.length > 0 ? { alertEvidence } : {}) };
  });
  const events = [
    ...(carriedNow.length > 0 ? [eventOf('RecordsCarriedForward', { records: carriedNow })] : []),
    eventOf('LogSegmentsExpired', { ...cut, before, carried: carriedNow.length, dropped: droppedNow.length, treeFrontier, archives }),
  ];
  // After the cut, the live store's carried records are those carried earlier by records it keeps, and these.
  const judged = new Set([...carriedNow.map((c) => c.seq), ...droppedNow.map((r) => r.seq)]);
  const carried = [...deps.carried.all().filter((r) => !judged.has(r.seq)), ...carriedNow.map(asRecord)].sort((a, b) => a.seq - b.seq);
  await writer.cut(events, ctx, {
    at: cut,
    carried,
    inTransaction(recs) {
      deps.carried.write(carriedNow.length > 0 ? recs[0]!.seq : undefined, carriedNow, droppedNow);
      for (const r of droppedNow) for (const id of forget.get(r.seq)!) evidence.removeSync(id);
    },
  });
  return read.map(({ from, to }, i) => ({ fromSeq: from, toSeq: to, file: archived[i]!.file, carried: fates[i]!.carried.length, dropped: fates[i]!.dropped.length }));
}

/**
 * The evidence index forgets the events that left with their records (not re-sent copies stored
 * with a later record): inside the transaction of a cut, on the leader and on every copy.
 */
export function forgetDroppedEvidence(evidence: Database<Uint8Array, string>, dropped: readonly LogRecord[]): void {
  for (const id of [...droppedEvidenceIds(evidence, dropped)]) evidence.removeSync(id);
}

/** The ids of the evidence index that belong to `dropped` (an id re-sent later belongs to its later record). */
function* droppedEvidenceIds(evidence: Database<Uint8Array, string>, dropped: readonly LogRecord[]): Iterable<string> {
  for (const r of dropped) {
    for (const e of eventsOfRecord(r)) {
      const at = evidence.get(e.id);
      if (at && decodeStored(at).seq === r.seq) yield e.id;
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
