import type { Pipeline } from '../../commands/pipeline.js';
import { decideWitnessRefusal } from '../../commands/witness-refusal.js';
import { parseCheckpoint } from '../../log/checkpoint.js';
import type { Transparency } from '../../log/checkpointer.js';
import { parseNote, type NoteVerifier } from '../../log/signed-note.js';
import { formatAddCheckpoint } from '../../log/witness-protocol.js';
import type { WriteModels } from '../../projections/models.js';
import { cosignedAt, freshness, newestCosignatureMs, sizeCosignedBy, type Freshness } from './freshness.js';
import { interpretReply, logSignedOnly, postAddCheckpoint, type PushOutcome } from './witness-client.js';

/** A witness the instance pushes its checkpoints to: its submission prefix and its verifier key. */
export interface PushTarget {
  readonly url: string;
  readonly key: NoteVerifier;
}

/** One pushed witness as the health detail shows it. */
export interface PushedWitness {
  readonly name: string;
  readonly url: string;
  /** `pending` before its first answer, `retrying` after a failure, `refused` after a refusal. */
  readonly state: 'pending' | 'ok' | 'retrying' | 'refused';
  /** The size the witness last cosigned, as the instance knows it (0: none known). */
  readonly knownSize: number;
  readonly lastCosignedAt: string | null;
  readonly lastError: string | null;
  readonly nextAttemptAt: string | null;
}

/** The witnesses' side of the health detail: how fresh the newest cosignature is, and each pushed witness. */
export interface WitnessHealth extends Freshness {
  readonly pushed: readonly PushedWitness[];
}

/** What the pusher needs. */
export interface WitnessPushOptions {
  readonly targets: readonly PushTarget[];
  /** Every witness key whose cosignature counts for freshness: the pushed ones and `log.witnesses`. */
  readonly accepted: readonly NoteVerifier[];
  readonly transparency: Pick<Transparency, 'checkpoint' | 'recent' | 'consistency' | 'cosign'>;
  /** Records refusals (through the leader on a JetStream node). */
  readonly pipeline: Pipeline<WriteModels>;
  readonly intervalMs: number;
  readonly maxAgeMs: number;
  /** Bound of one request, connection to last byte. */
  readonly timeoutMs: number;
  readonly now: () => Date;
  /** The time of the log's first live record (how long the log has existed), undefined while empty. */
  readonly logStartedAt: () => string | undefined;
  /** Whether this node pushes (a JetStream node only while it leads); always when absent. */
  readonly leads?: () => boolean;
  readonly log: (line: Record<string, unknown>) => void;
  /** The transport (tests may count requests); postAddCheckpoint by default. */
  readonly post?: typeof postAddCheckpoint;
}

/** The running pusher. */
export interface WitnessPush {
  health(): WitnessHealth;
  /** Pushes the latest checkpoint to every witness whose back-off has run out; resolves when all answered. */
  push(): Promise<void>;
  start(): void;
  stop(): Promise<void>;
}

interface TargetState {
  state: PushedWitness['state'];
  known: number;
  failures: number;
  nextAtMs: number;
  lastCosignedAtMs?: number;
  lastError?: string;
}

/** How many stored checkpoints are looked through at start for the newest cosignature. */
const SCAN_AT_START = 1000;
/** The longest back-off between two pushes to a witness that fails (or the interval, when longer). */
const MAX_BACKOFF_MS = 600_000;
/** A push follows at most this many 409s (each names the size to prove from) before it counts as failed. */
const MAX_ATTEMPTS = 3;

const b64 = (hashes: readonly Uint8Array[]) => hashes.map((h) => Buffer.from(h).toString('base64'));
const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());

/** The delay before the next push to a witness after `failures` failures or refusals in a row. */
export function backoffMs(intervalMs: number, failures: number): number {
  return Math.min(intervalMs * 2 ** Math.max(0, failures - 1), Math.max(intervalMs, MAX_BACKOFF_MS));
}

/**
 * Pushes the instance's latest checkpoint to each configured witness every interval (C2SP tlog-witness), merges the
 * cosignatures that verify into the stored checkpoint, and records a witness's refusal as a `vigil.witness-refused`
 * alert. A network failure is retried at the next tick with back-off and is only logged and shown in health.
 */
export function createWitnessPush(o: WitnessPushOptions): WitnessPush {
  const post = o.post ?? postAddCheckpoint;
  const states = new Map<PushTarget, TargetState>(
    o.targets.map((t) => {
      // A first guess of the size the witness holds: a 409 corrects it.
      const known = sizeCosignedBy(o.transparency.checkpoint(), t.key);
      return [t, { state: 'pending', known, failures: 0, nextAtMs: 0 }];
    }),
  );
  let scanned = newestCosignatureMs(o.transparency.recent(SCAN_AT_START), o.accepted);
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;
  // A stop does not wait for a slow witness: the requests in flight are ended.
  const stopping = new AbortController();

  const failed = (t: PushTarget, st: TargetState, reason: string, nowMs: number) => {
    st.failures++;
    st.state = 'retrying';
    st.lastError = reason;
    st.nextAtMs = nowMs + backoffMs(o.intervalMs, st.failures);
    o.log({ level: 'warn', msg: 'witness push failed', witness: t.key.name, url: t.url, error: reason });
  };

  async function refused(
    t: PushTarget,
    st: TargetState,
    size: number,
    outcome: Extract<PushOutcome, { kind: 'refused' }>,
    answer: { status: number; text: string },
  ) {
    const nowMs = o.now().getTime();
    st.failures++;
    st.state = 'refused';
    st.lastError = outcome.reason;
    st.nextAtMs = nowMs + backoffMs(o.intervalMs, st.failures);
    const seen = {
      witness: t.key.name,
      url: t.url,
      size,
      ...(outcome.witnessSize !== undefined ? { witnessSize: outcome.witnessSize } : {}),
      status: answer.status,
      reason: outcome.reason,
      answer: answer.text,
    };
    const ctx = { now: new Date(nowMs).toISOString() };
    const decided = await o.pipeline.dispatch({
      decide: (m) => decideWitnessRefusal({ witnesses: m.witnesses, alerts: m.alerts }, seen, ctx),
      ctx,
    });
    o.log({
      level: 'error',
      msg: 'witness refused the checkpoint',
      witness: t.key.name,
      url: t.url,
      size,
      status: answer.status,
      reason: outcome.reason,
      alerted: decided.ok ? decided.result : false,
    });
  }

  async function pushTo(t: PushTarget, st: TargetState): Promise<void> {
    const stored = o.transparency.checkpoint();
    const parsed = stored === undefined ? undefined : parseNote(stored);
    const cp = parsed?.ok ? parseCheckpoint(parsed.text) : undefined;
    if (!stored || !cp?.ok) return;
    const note = logSignedOnly(stored);
    const size = cp.checkpoint.size;
    let old = Math.min(st.known, size);
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      let reply;
      try {
        const proof = old === 0 ? [] : b64(o.transparency.consistency(old, size));
        reply = await post(t.url, formatAddCheckpoint({ old, proof, note }), o.timeoutMs, stopping.signal);
      } catch (err) {
        return failed(t, st, (err as Error).message, o.now().getTime());
      }
      const outcome = interpretReply(reply, { old, size, note }, t.key);
      switch (outcome.kind) {
        case 'retry':
          st.known = old = outcome.old;
          continue;
        case 'failed':
          return failed(t, st, outcome.reason, o.now().getTime());
        case 'refused':
          // A 422 answers a proof from `old`: the size the witness holds.
          return refused(t, st, size, reply.status === 422 ? { ...outcome, witnessSize: old } : outcome, reply);
        case 'cosigned': {
          const merged = await o.transparency.cosign(outcome.note);
          if (!merged.ok && merged.status === 404)
            return failed(t, st, `the checkpoint of ${size} records is no longer stored`, o.now().getTime());
          Object.assign(st, {
            state: 'ok',
            known: size,
            failures: 0,
            nextAtMs: 0,
            lastCosignedAtMs: o.now().getTime(),
          });
          delete st.lastError;
          return;
        }
        default: {
          const never: never = outcome;
          return never;
        }
      }
    }
    failed(t, st, `still answered 409 after ${MAX_ATTEMPTS} attempts`, o.now().getTime());
  }

  function push(): Promise<void> {
    if (running) return running;
    if (o.leads && !o.leads()) return Promise.resolve();
    const nowMs = o.now().getTime();
    const due = [...states].filter(([, st]) => st.nextAtMs <= nowMs);
    running = Promise.all(
      due.map(([t, st]) =>
        pushTo(t, st).catch((err: unknown) =>
          o.log({ level: 'error', msg: 'witness push failed', witness: t.key.name, error: (err as Error)?.message }),
        ),
      ),
    ).then(() => {
      running = undefined;
    });
    return running;
  }

  return {
    health() {
      const nowMs = o.now().getTime();
      const latest = o.transparency.checkpoint();
      const stored = latest === undefined ? undefined : cosignedAt(latest, o.accepted);
      if (stored !== undefined) scanned = Math.max(scanned ?? 0, stored * 1000);
      const pushed = [...states.values()].map((st) => st.lastCosignedAtMs ?? 0);
      const newest = Math.max(scanned ?? 0, ...pushed);
      const f = freshness({
        // A JetStream follower pushes nothing and its own checkpoints are no one's to witness: the leader reports.
        configured: o.leads && !o.leads() ? 0 : o.accepted.length,
        lastCosignedMs: newest > 0 ? newest : undefined,
        logStartedMs: Date.parse(o.logStartedAt() ?? '') || undefined,
        nowMs,
        maxAgeMs: o.maxAgeMs,
      });
      return {
        ...f,
        pushed: [...states].map(([t, st]) => ({
          name: t.key.name,
          url: t.url,
          state: st.state,
          knownSize: st.known,
          lastCosignedAt: iso(st.lastCosignedAtMs),
          lastError: st.lastError ?? null,
          nextAttemptAt: st.nextAtMs > nowMs ? iso(st.nextAtMs) : null,
        })),
      };
    },
    push,
    start() {
      if (states.size === 0) return;
      timer = setInterval(() => void (stopped ? undefined : push()), o.intervalMs);
      timer.unref();
      void push();
    },
    async stop() {
      stopped = true;
      if (timer) clearInterval(timer);
      stopping.abort();
      await running;
    },
  };
}
