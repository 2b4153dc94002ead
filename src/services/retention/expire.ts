import { join } from 'node:path';
import type { Database } from 'lmdb';
import type { CommandContext } from '../../commands/decision.js';
import type { Pipeline } from '../../commands/pipeline.js';
import type { WriteModels } from '../../projections/models.js';
import { asInstanceRecord } from '../../events/read.js';
import { eventsOfRecord } from '../../events/record-types.js';
import { eventOf } from '../../events/union.js';
import type { LmdbEventLog } from '../../log/lmdb-log.js';
import { decodeRecord } from '../../log/record.js';
import { type LogRecord } from '../../kernel/record.js';
import { frontierText } from '../../log/merkle-tree.js';
import type { CollectorsState } from '../../projections/collectors.js';
import type { AlertsState } from '../../projections/alerts.js';
import { EVIDENCE_DBS, decodeStored } from '../../projections/evidence.js';
import {
  ARCHIVE_FORMAT,
  archiveName,
  archiveSegment,
  archiveSegmentOffThread,
  type ArchivedSegment,
} from './archive.js';
import type { CarriedIndex } from '../../log/retention/carried.js';
import { retentionDays, shortestDays } from '../../log/retention/kinds.js';
import { expiredBefore, expiringSegments, fateOfSummary } from '../../log/retention/plan.js';
import type { RetentionSettings } from '../../log/retention/settings.js';

/** What an expiry needs: the log, the single writer, the carried records and the checkpoints. */
export interface ExpiryDeps {
  readonly log: LmdbEventLog;
  readonly pipeline: Pipeline<WriteModels>;
  readonly carried: CarriedIndex;
  /** Makes a checkpoint at the committed head when it grew, and reads the stored ones. */
  readonly checkpoints: {
    make(): Promise<string | undefined>;
    checkpoint(size?: number): string | undefined;
    committedSize(): number;
  };
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
  const atOf = (seq: number) => {
    for (const r of log.read(seq, seq)) return r.at;
    return undefined;
  };
  const perCut = Math.max(1, Math.floor(MAX_RECORDS_PER_CUT / settings.segmentRecords));
  const done: ExpiredSegment[] = [];
  for (;;) {
    const committed = Math.min(deps.checkpoints.committedSize(), deps.delivered?.() ?? Infinity);
    const segments = expiringSegments(
      log.first(),
      committed,
      settings.segmentRecords,
      atOf,
      before,
      Math.min(perCut, MAX_SEGMENTS_PER_RUN - done.length),
    );
    if (segments.length === 0 || deps.leads?.() === false) return done;
    done.push(...(await expireTogether(deps, segments, before, ctx)));
  }
}

/** Dropped records whose evidence entries are looked up between two turns of the writer. */
const LOOKUP_SLICE = 64;

/** The records `from`..`to` decoded, with their stored bytes (for an archive written on this thread). */
function* decodedRange(
  log: LmdbEventLog,
  from: number,
  to: number,
): Iterable<{ record: LogRecord; bytes: Uint8Array }> {
  for (const { bytes } of log.readRaw(from, to)) yield { record: decodeRecord(bytes), bytes };
}

/**
 * Expires consecutive `segments` by one cut: archives each, then one transaction. The archive
 * worker reads and judges the segments' records, so the writer's thread decodes none of them: a run
 * of 16 segments is hundreds of thousands of events, seconds of work that would otherwise take
 * turns from ingest.
 */
async function expireTogether(
  deps: ExpiryDeps,
  segments: ReadonlyArray<{ from: number; to: number }>,
  before: string,
  ctx: CommandContext,
): Promise<ExpiredSegment[]> {
  const { log, pipeline, settings } = deps;
  const last = segments.at(-1)!.to;
  await deps.checkpoints.make();
  const checkpoint = deps.checkpoints.checkpoint();
  const checkpointSize = Number(checkpoint?.split('\n')[1]);
  if (!checkpoint || !(checkpointSize >= last)) throw new Error(`no signed checkpoint covers record ${last} yet`);
  const judge = { days: retentionDays(settings), now: ctx.now };
  const archived: Array<{ from: number; to: number; file: string } & ArchivedSegment> = [];
  for (const { from, to } of segments) {
    const file = archiveName(from, to, deps.node);
    let prevHash: string | undefined;
    for (const r of log.read(from, from)) prevHash = r.prev;
    if (prevHash === undefined) throw new Error(`record ${from} is not in the live store`);
    const header = {
      archive: ARCHIVE_FORMAT,
      origin: deps.origin,
      fromSeq: from,
      toSeq: to,
      prevHash,
      checkpoint,
      checkpointSize,
    } as const;
    const done =
      deps.storePath !== undefined
        ? await archiveSegmentOffThread(deps.storePath, deps.archiveDir, file, header, judge)
        : await archiveSegment(deps.archiveDir, file, header, decodedRange(log, from, to), judge);
    archived.push({ from, to, file, ...done });
  }
  const latest = (r: LogRecord) => {
    const known = asInstanceRecord(r);
    if (known?.type !== 'CollectorSubmissionAccepted') return false;
    const d = known.data;
    const c = pipeline.models.collectors.collectors.get(d.collectorId);
    return c !== undefined && c.epoch === d.epoch && c.lastSequence === d.sequence;
  };
  const fatesNow = () => archived.map(({ summary }) => fateOfSummary(summary, latest));
  // The evidence index entries that leave with the dropped records, looked up a slice per turn
  // before the cut: inside its transaction they are only removed. A record judged dropped now
  // stays dropped (a submission stops being its collector's latest, never the reverse).
  const evidence = pipeline.models.db<Uint8Array>(EVIDENCE_DBS.byId) as unknown as Database<Uint8Array, string>;
  const forget = new Map<number, string[]>();
  for (const r of fatesNow().flatMap((f) => f.dropped)) {
    forget.set(r.seq, ownedEvidence(evidence, r));
    if (forget.size % LOOKUP_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  // Decided now, in the same turn the writer stages it: nothing can change the models in between.
  const alerts = pipeline.models.alerts;
  const fates = fatesNow();
  const carriedNow = fates.flatMap((f) => f.carried);
  const droppedNow = fates.flatMap((f) => f.dropped);
  for (const r of droppedNow) if (!forget.has(r.seq)) forget.set(r.seq, ownedEvidence(evidence, r));
  const cut = {
    firstSeq: last + 1,
    prevHash: archived.at(-1)!.summary.lastHash,
    treeRoot: Buffer.from(log.tree.root(last)).toString('base64'),
  };
  const treeFrontier = frontierText(log.tree.frontierAt(last));
  const archives = archived.map(({ from, to, file, digest }, i) => {
    const alertEvidence = archivedAlertEvidence(alerts, fates[i]!.dropped);
    return {
      file,
      fromSeq: from,
      toSeq: to,
      digest,
      checkpointSize,
      ...(alertEvidence.length > 0 ? { alertEvidence } : {}),
    };
  });
  const events = [
    ...(carriedNow.length > 0 ? [eventOf('RecordsCarriedForward', { records: carriedNow })] : []),
    eventOf('LogSegmentsExpired', {
      ...cut,
      before,
      carried: carriedNow.length,
      dropped: droppedNow.length,
      treeFrontier,
      archives,
    }),
  ];
  // The carried records are copies of evidence detected when first appended: the cut says so.
  await pipeline.cut({
    events,
    ctx,
    detection: 'none',
    cut: {
      at: cut,
      inTransaction(recs) {
        deps.carried.write(carriedNow.length > 0 ? recs[0]!.seq : undefined, carriedNow, droppedNow);
        for (const r of droppedNow) for (const id of forget.get(r.seq)!) evidence.removeSync(id);
      },
    },
  });
  return archived.map(({ from, to, file }, i) => ({
    fromSeq: from,
    toSeq: to,
    file,
    carried: fates[i]!.carried.length,
    dropped: fates[i]!.dropped.length,
  }));
}

/**
 * Which of a dropped record's event ids the evidence index holds for it (an id re-sent later belongs to its later
 * record).
 */
function ownedEvidence(
  evidence: Database<Uint8Array, string>,
  dropped: { readonly seq: number; readonly eventIds: readonly string[] },
): string[] {
  return dropped.eventIds.filter((id) => {
    const at = evidence.get(id);
    return at !== undefined && decodeStored(at).seq === dropped.seq;
  });
}

/**
 * The evidence index forgets the events that left with their records (not re-sent copies stored
 * with a later record): inside the transaction of a cut, on the leader and on every copy.
 */
export function forgetDroppedEvidence(evidence: Database<Uint8Array, string>, dropped: readonly LogRecord[]): void {
  for (const r of dropped)
    for (const id of ownedEvidence(evidence, { seq: r.seq, eventIds: eventsOfRecord(r).map((e) => e.id) }))
      evidence.removeSync(id);
}

/** The alerts whose evidence leaves with the dropped records, and which of it. */
function archivedAlertEvidence(
  alerts: AlertsState,
  dropped: ReadonlyArray<{ readonly eventIds: readonly string[] }>,
): Array<{ alertId: string; eventIds: string[] }> {
  const leaving = new Set<string>();
  for (const r of dropped) for (const id of r.eventIds) leaving.add(id);
  if (leaving.size === 0) return [];
  const out: Array<{ alertId: string; eventIds: string[] }> = [];
  for (const a of alerts.alerts.values()) {
    const eventIds = a.evidence.map((ref) => ref.eventId).filter((id) => leaving.has(id));
    if (eventIds.length > 0) out.push({ alertId: a.id, eventIds });
  }
  return out;
}
