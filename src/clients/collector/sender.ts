import type { AgentKey } from './keys.js';
import { resequence } from './resequence.js';
import type { Spool, SpoolEntry } from './spool.js';

/** What the agent reports about sending (written to status.json). */
export interface SendStatus {
  lastAttemptAt: string | null;
  lastAckedAt: string | null;
  lastAckedSequence: number;
  lastError: string | null;
  consecutiveFailures: number;
  /** The delay the server asked for with its last 429 or 503 (Retry-After), if any. */
  retryAfterMs?: number | null;
}

/** What the sender needs. */
export interface SenderDeps {
  readonly spool: Spool;
  readonly server: string;
  readonly bearer: string;
  readonly key: AgentKey;
  readonly retry: { readonly initialMs: number; readonly maxMs: number };
  readonly log: (level: 'info' | 'warn' | 'error', msg: string, extra?: Record<string, unknown>) => void;
  readonly now: () => Date;
  readonly status: SendStatus;
}

/** What one attempt came to. */
export type Attempt = 'acked' | 'resynced' | 'quarantined' | 'retry';

/** Longest Retry-After the agent honours; a larger value is capped so a misconfigured server cannot park it. */
const MAX_RETRY_AFTER_MS = 300_000;

/** The delay a Retry-After header asks for (seconds or an HTTP date), capped; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now: Date): number | undefined {
  if (header === null) return undefined;
  const text = header.trim();
  const ms = /^\d{1,9}$/.test(text) ? Number(text) * 1000 : Date.parse(text) - now.getTime();
  return Number.isFinite(ms) ? Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS) : undefined;
}

/** Full-jitter exponential backoff: a random delay up to min(max, initial * 2^failures), at least half of it. */
export function backoffMs(failures: number, retry: { initialMs: number; maxMs: number }, random = Math.random): number {
  const cap = Math.min(retry.maxMs, retry.initialMs * 2 ** Math.min(failures, 30));
  return Math.round(cap / 2 + random() * (cap / 2));
}

async function post(
  deps: SenderDeps,
  entry: SpoolEntry,
  signal: AbortSignal,
): Promise<{ status: number; body: Record<string, unknown>; retryAfter: string | null }> {
  const res = await fetch(new URL('/api/v1/collector/submissions', deps.server), {
    method: 'POST',
    headers: { authorization: `Bearer ${deps.bearer}`, 'content-type': 'application/json' },
    body: JSON.stringify(entry.envelope),
    signal: AbortSignal.any([signal, AbortSignal.timeout(120_000)]),
  });
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    /* not JSON: the status says enough */
  }
  return { status: res.status, body, retryAfter: res.headers.get('retry-after') };
}

/**
 * Sends the oldest spooled envelope once: 202 acknowledges it; 409 with an expected sequence
 * renumbers the spool from there; 400 and 413 (the server will never take it) set it aside;
 * network errors, 429, 5xx and auth failures are retried later by the caller. A 429 or 503 with
 * Retry-After sets `deps.status.retryAfterMs`: the caller waits at least that long.
 */
export async function sendOldest(deps: SenderDeps, signal: AbortSignal): Promise<Attempt | 'empty'> {
  const seq = deps.spool.sequences()[0];
  if (seq === undefined) return 'empty';
  const entry = deps.spool.read(seq);
  deps.status.lastAttemptAt = deps.now().toISOString();
  let r: { status: number; body: Record<string, unknown>; retryAfter: string | null };
  deps.status.retryAfterMs = null;
  try {
    r = await post(deps, entry, signal);
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    deps.status.lastError = `network: ${(err as Error).message}${cause ? ` (${cause})` : ''}`;
    // Said once per outage; the status file and `vigil collector status` keep the latest error.
    if (deps.status.consecutiveFailures === 0)
      deps.log('warn', 'cannot reach the server; spooling and retrying', {
        server: deps.server,
        error: deps.status.lastError,
        spooled: deps.spool.sequences().length,
      });
    return 'retry';
  }
  if (r.status === 202) {
    deps.spool.acknowledge(entry, deps.now().toISOString());
    Object.assign(deps.status, {
      lastAckedAt: deps.now().toISOString(),
      lastAckedSequence: entry.sequence,
      lastError: null,
    });
    // The progress line: what was sent, what the server accepted, what is still waiting.
    deps.log('info', 'acknowledged', {
      sequence: entry.sequence,
      events: entry.events,
      acceptedEvents: r.body.acceptedEvents,
      spooled: deps.spool.sequences().length,
    });
    return 'acked';
  }
  const reason = typeof r.body.error === 'string' ? r.body.error : '';
  deps.status.lastError = `HTTP ${r.status}${reason ? `: ${reason}` : ''}`;
  const expected = r.body.expectedSequence;
  if (r.status === 409 && typeof expected === 'number' && Number.isSafeInteger(expected) && expected >= 1) {
    deps.log('warn', 'server expects another sequence: renumbering the spool', {
      sent: entry.sequence,
      expected,
      reason: r.body.reason,
    });
    resequence(deps.spool, expected, deps.key);
    return 'resynced';
  }
  if (r.status === 400 || r.status === 413) {
    deps.log('error', 'server refused an envelope for good; set aside under rejected/', {
      sequence: entry.sequence,
      status: r.status,
      error: reason,
      issues: r.body.issues,
    });
    deps.spool.quarantine(entry.sequence);
    resequence(deps.spool, entry.sequence, deps.key);
    return 'quarantined';
  }
  if (r.status === 401 || r.status === 403)
    deps.log('error', 'server refused the collector; will keep retrying', { status: r.status, error: reason });
  // 507: the instance's disk is past its flood mark; it says when to come back, like back-pressure.
  if (r.status === 429 || r.status === 503 || r.status === 507)
    deps.status.retryAfterMs = retryAfterMs(r.retryAfter, deps.now()) ?? null;
  return 'retry';
}
