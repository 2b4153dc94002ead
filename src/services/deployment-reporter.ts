import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { secretFileProblem } from '../kernel/secret-files.js';
import { eventsOfRecord } from '../events/record-types.js';
import type { EventLog } from '../log/event-log.js';
export type { ReporterStatus } from '../projections/console-query.js';
import type { ReporterStatus } from '../projections/console-query.js';

/** Domain of signed snapshots (must match the authority's `SNAPSHOT_DOMAIN`, docs/setup-protocol.md). */
export const SNAPSHOT_SIGNING_DOMAIN = 'vigil-setup/deployment-snapshot/v1';
/** How far back the reporter looks for systems sending live data. */
export const LIVE_WINDOW_MS = 15 * 60_000;
const SCAN_RECORDS = 5000;

/** One system in a snapshot. */
export interface ReportedSystem {
  id: string;
  kind: 'central' | 'collector' | 'source';
  live: boolean;
  last_seen_at?: string;
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

/** Systems whose evidence arrived within the live window, by `source.instance`, from the tail of the log. */
export function recentSystems(log: EventLog, now: Date): ReportedSystem[] {
  const head = log.head().seq;
  const since = new Date(now.getTime() - LIVE_WINDOW_MS).toISOString();
  const lastSeen = new Map<string, string>();
  for (const r of log.read(Math.max(1, head - SCAN_RECORDS + 1), head)) {
    if (r.at < since) continue;
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
  readonly now: () => Date;
  readonly onLine: (line: Record<string, unknown>) => void;
}

/** Builds the snapshot payload (docs/setup-protocol.md); `updated_at` is the heartbeat. */
export function buildSnapshot(o: ReporterOptions): Record<string, unknown> {
  const now = o.now();
  const central: ReportedSystem = {
    id: o.centralVmId ?? 'central',
    kind: 'central',
    live: true,
    last_seen_at: now.toISOString(),
  };
  const systems = [central, ...recentSystems(o.log, now)];
  return {
    deployment_id: o.deploymentId,
    updated_at: now.toISOString(),
    instance_url: o.instanceUrl,
    ...(o.centralVmId ? { central_vm_id: o.centralVmId } : {}),
    systems_reporting_live: systems.filter((s) => s.live).length,
    systems,
    log_head: o.log.head().seq,
  };
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
