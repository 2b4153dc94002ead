import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import * as v from 'valibot';
import { secretFileProblem } from '../kernel/secret-files.js';
import { eventsOfRecord } from '../events/record-types.js';
import type { EventLog } from '../log/event-log.js';
import type { CollectorsState } from '../projections/collectors.js';
import { collectorKeyOf, type MonitoringState } from '../projections/monitoring.js';
import { EnrollmentGrantsSchema } from './enrollment-grants.js';
export type { ReporterStatus } from '../projections/console-query.js';
import type { ReporterStatus } from '../projections/console-query.js';

/** Domain of signed snapshots (must match the authority's `SNAPSHOT_DOMAIN`, docs/setup-protocol.md). */
export const SNAPSHOT_SIGNING_DOMAIN = 'vigil-setup/deployment-snapshot/v1';
/** How far back the reporter looks for systems sending live data. */
export const LIVE_WINDOW_MS = 15 * 60_000;
const SCAN_RECORDS = 5000;
/** At most this many collectors in a snapshot (the deployment's own first, then by id); the rest are counted. */
export const MAX_REPORTED_COLLECTORS = 1000;
/** ...and at most this many characters of them, so the signed payload stays within the authority's bounds. */
export const COLLECTORS_BUDGET_CHARS = 120_000;
/** At most this many systems in a snapshot (the authority's bound)... */
const MAX_SYSTEMS = 1024;
/**
 * ...and at most this many characters of payload: the authority takes 200,000 and a body of 256 KiB, in which the
 * payload travels as a JSON string (each quote escaped).
 */
export const PAYLOAD_BUDGET_CHARS = 180_000;

/** One system in a snapshot. */
export interface ReportedSystem {
  id: string;
  kind: 'central' | 'collector' | 'source';
  live: boolean;
  last_seen_at?: string;
}

/** One collector the instance knows, as a snapshot reports it (docs/setup-protocol.md). */
export interface ReportedCollector {
  collector_id: string;
  /** The VM the installer's enrollment grant named for it, when it enrolled with one of this deployment. */
  vm_id?: string;
  /** The deployment epoch of the grant it enrolled with; absent when it enrolled with a token made on the instance. */
  enrollment_epoch?: number;
  enrolled_at: string;
  /** The last submission accepted under this enrollment (its last evidence); null before the first. */
  last_evidence_at: string | null;
  /** Declared silent by the instance's own silence check, and not reported since. */
  silent: boolean;
}

/** What the reporter reads of the instance's models: its collectors and the silence monitor's view of them. */
export interface CollectorSource {
  readonly collectors: CollectorsState;
  readonly monitoring: MonitoringState;
}

/** The enrollment grants the installer wrote (hashes only): their deployment epoch and each collector's VM. */
export interface GrantsSeen {
  readonly epoch: number;
  readonly vmIds: ReadonlyMap<string, string>;
}

/** The ids the grant import gives tokens: `grant-e<epoch>-<collector_id>-<hash prefix>` (enrollment-grants.ts). */
const GRANT_TOKEN_ID = /^grant-e([0-9]{1,9})-/;

/** Reads the grants file for its epoch and VM ids; undefined when absent or unreadable (the start checked it). */
export function readGrantsSeen(path: string): GrantsSeen | undefined {
  if (!existsSync(path)) return undefined;
  try {
    const g = v.parse(EnrollmentGrantsSchema, JSON.parse(readFileSync(path, 'utf8')));
    return { epoch: g.enrollment_epoch, vmIds: new Map(g.collectors.map((c) => [c.collector_id, c.vm_id])) };
  } catch {
    return undefined;
  }
}

/** A collector counts as reporting once it has sent evidence under its enrollment and is not silent. */
const collectorLive = (c: ReportedCollector): boolean => c.last_evidence_at !== null && !c.silent;

/**
 * The collectors the instance knows, each with the epoch of the grant it enrolled with, its last evidence and
 * whether the instance holds it silent now; bounded by count and size, the deployment's own collectors first.
 */
export function reportedCollectors(
  s: CollectorSource,
  grants: GrantsSeen | undefined,
): { collectors: ReportedCollector[]; omitted: number; omittedLive: number } {
  const all = [...s.collectors.collectors.values()].map((c): ReportedCollector => {
    const epoch = GRANT_TOKEN_ID.exec(c.tokenId ?? '')?.[1];
    const vmId = grants?.vmIds.get(c.collectorId);
    const a = s.monitoring.sources.get(collectorKeyOf(c.collectorId));
    return {
      collector_id: c.collectorId,
      ...(vmId !== undefined ? { vm_id: vmId } : {}),
      ...(epoch !== undefined ? { enrollment_epoch: Number(epoch) } : {}),
      enrolled_at: c.enrolledAt,
      last_evidence_at: c.lastAcceptedAt,
      // As the self-monitor lists silent sources: declared silent and not seen since.
      silent: a?.silent !== undefined && !(a.lastSeenAt > a.silent.lastSeenAt),
    };
  });
  all.sort(
    (a, b) =>
      Number(b.vm_id !== undefined) - Number(a.vm_id !== undefined) ||
      (a.collector_id < b.collector_id ? -1 : a.collector_id > b.collector_id ? 1 : 0),
  );
  const kept: ReportedCollector[] = [];
  let chars = 0;
  for (const c of all) {
    chars += JSON.stringify(c).length + 1;
    if (kept.length >= MAX_REPORTED_COLLECTORS || chars > COLLECTORS_BUDGET_CHARS) break;
    kept.push(c);
  }
  const omittedLive = all.slice(kept.length).filter(collectorLive).length;
  return { collectors: kept, omitted: all.length - kept.length, omittedLive };
}

/** Loads the deployment identity key (PKCS#8 PEM, Ed25519), refusing a file others can read. */
export function loadIdentityKey(path: string): KeyObject {
  const problem = secretFileProblem(path);
  if (problem) throw new Error(`refusing to start: ${problem}`);
  const key = createPrivateKey({ key: readFileSync(path, 'utf8'), format: 'pem' });
  if (key.asymmetricKeyType !== 'ed25519') throw new Error(`${path} must hold an Ed25519 private key`);
  return key;
}

/** A signed request body: the payload as JSON text and the Ed25519 signature over domain, NUL, payload. */
export function signPayload(domain: string, payload: unknown, key: KeyObject): { payload: string; signature: string } {
  const text = JSON.stringify(payload);
  return {
    payload: text,
    signature: sign(null, Buffer.from(`${domain}\u0000${text}`, 'utf8'), key).toString('base64'),
  };
}

/** The records that are evidence of a source (as the silence monitor counts them: not Vigil's own access records). */
const EVIDENCE_TYPES: ReadonlySet<string> = new Set([
  'EventsIngested',
  'RawRecordsIngested',
  'CollectorSubmissionAccepted',
]);

/** Systems whose evidence arrived within the live window, by `source.instance`, from the tail of the log. */
export function recentSystems(log: EventLog, now: Date): ReportedSystem[] {
  const head = log.head().seq;
  const since = new Date(now.getTime() - LIVE_WINDOW_MS).toISOString();
  const lastSeen = new Map<string, string>();
  for (const r of log.read(Math.max(1, head - SCAN_RECORDS + 1), head)) {
    if (r.at < since || !EVIDENCE_TYPES.has(r.type)) continue;
    for (const e of eventsOfRecord(r)) {
      const id = `${e.source.adapter}:${e.source.instance}`.slice(0, 256);
      if ((lastSeen.get(id) ?? '') < r.at) lastSeen.set(id, r.at);
    }
  }
  return [...lastSeen].slice(0, 1000).map(([id, at]) => ({
    id,
    kind: id.startsWith('collector:') ? 'collector' : 'source',
    live: true,
    last_seen_at: at,
  }));
}

/** What the reporter needs. */
export interface ReporterOptions {
  readonly authorityUrl: string;
  readonly deploymentId: string;
  readonly key: KeyObject;
  readonly intervalMs: number;
  readonly instanceUrl: string;
  readonly centralVmId?: string;
  readonly log: EventLog;
  /** The instance's collectors and silence monitor (absent: the snapshot lists no collectors). */
  readonly collectors?: () => CollectorSource;
  /** The enrollment grants the installer wrote, read at start. */
  readonly grants?: GrantsSeen;
  readonly now: () => Date;
  readonly onLine: (line: Record<string, unknown>) => void;
}

/**
 * Builds the snapshot payload (docs/setup-protocol.md); `updated_at` is the heartbeat. Systems are the central
 * instance, every collector it knows (live while it reports within its silence window) and the sources with
 * evidence in the live window; `systems_reporting_live` counts all of them, the list holds the first 1,024 that fit
 * the payload's budget.
 */
export function buildSnapshot(o: ReporterOptions): Record<string, unknown> {
  const now = o.now();
  const central: ReportedSystem = {
    id: o.centralVmId ?? 'central',
    kind: 'central',
    live: true,
    last_seen_at: now.toISOString(),
  };
  const fleet = o.collectors ? reportedCollectors(o.collectors(), o.grants) : undefined;
  const byId = new Map<string, ReportedSystem>();
  for (const c of fleet?.collectors ?? [])
    byId.set(collectorKeyOf(c.collector_id), {
      id: collectorKeyOf(c.collector_id),
      kind: 'collector',
      live: collectorLive(c),
      ...(c.last_evidence_at !== null ? { last_seen_at: c.last_evidence_at } : {}),
    });
  for (const s of recentSystems(o.log, now)) if (!byId.has(s.id)) byId.set(s.id, s);
  const systems = [central, ...byId.values()];
  const payload: Record<string, unknown> = {
    deployment_id: o.deploymentId,
    updated_at: now.toISOString(),
    instance_url: o.instanceUrl,
    ...(o.centralVmId ? { central_vm_id: o.centralVmId } : {}),
    ...(o.grants ? { enrollment_epoch: o.grants.epoch } : {}),
    systems_reporting_live: systems.filter((s) => s.live).length + (fleet?.omittedLive ?? 0),
    systems: [],
    ...(fleet ? { collectors: fleet.collectors } : {}),
    ...(fleet && fleet.omitted > 0 ? { collectors_omitted: fleet.omitted } : {}),
    log_head: o.log.head().seq,
  };
  // The systems fill what the budget leaves: the central instance, the collectors, then the other sources.
  let chars = JSON.stringify(payload).length;
  const listed: ReportedSystem[] = [];
  for (const s of systems) {
    chars += JSON.stringify(s).length + 1;
    if (listed.length >= MAX_SYSTEMS || chars > PAYLOAD_BUDGET_CHARS) break;
    listed.push(s);
  }
  payload.systems = listed;
  return payload;
}

/** The running reporter. */
export interface DeploymentReporter {
  sendNow(): Promise<number>;
  stop(): Promise<void>;
  status(): ReporterStatus;
}

/** Sends a signed snapshot at once and then every `intervalMs`; failures are logged and retried next interval. */
export function startDeploymentReporter(o: ReporterOptions): DeploymentReporter {
  const url = `${o.authorityUrl.replace(/\/+$/, '')}/v1/deployments/${encodeURIComponent(o.deploymentId)}/snapshots`;
  let inFlight: Promise<number> | undefined;
  let state: ReporterStatus = {
    deploymentId: o.deploymentId,
    authorityUrl: o.authorityUrl,
    intervalSeconds: Math.round(o.intervalMs / 1000),
    lastAttemptAt: null,
    lastDeliveredAt: null,
    authorityStatus: null,
    failingSince: null,
    lastError: null,
  };
  const failed = (at: string, error: string) => {
    state = { ...state, failingSince: state.failingSince ?? at, lastError: error.slice(0, 200) };
  };
  async function once(): Promise<number> {
    const at = o.now().toISOString();
    state = { ...state, lastAttemptAt: at };
    try {
      const body = signPayload(SNAPSHOT_SIGNING_DOMAIN, buildSnapshot(o), o.key);
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(15_000),
      });
      const answer = (await res.json().catch(() => ({}))) as { error?: string; status?: unknown };
      if (res.status !== 202) {
        o.onLine({ level: 'warn', msg: 'deployment snapshot refused', status: res.status, error: answer.error });
        failed(at, `HTTP ${res.status}${typeof answer.error === 'string' ? `: ${answer.error}` : ''}`);
      } else {
        state = {
          ...state,
          lastDeliveredAt: at,
          authorityStatus: typeof answer.status === 'string' ? answer.status.slice(0, 64) : null,
          failingSince: null,
          lastError: null,
        };
      }
      return res.status;
    } catch (err) {
      o.onLine({ level: 'warn', msg: 'deployment snapshot not delivered', error: (err as Error).message });
      failed(at, (err as Error).message);
      return 0;
    }
  }
  const sendNow = (): Promise<number> => {
    if (inFlight) return inFlight;
    const p = once().finally(() => {
      if (inFlight === p) inFlight = undefined;
    });
    inFlight = p;
    return p;
  };
  void sendNow();
  const timer = setInterval(() => void sendNow(), o.intervalMs);
  timer.unref();
  return {
    sendNow,
    status: () => state,
    async stop() {
      clearInterval(timer);
      await inFlight;
    },
  };
}
