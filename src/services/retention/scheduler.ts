import { decideRetentionPolicy } from '../../commands/record-retention.js';
import { RETENTION, type RecordedPolicy, type RetentionState } from '../../projections/retention.js';
import { expireSegments, type ExpiredSegment, type ExpiryDeps } from './expire.js';
import { retentionDays } from '../../log/retention/kinds.js';
import type { RetentionSettings } from '../../log/retention/settings.js';

/** Retention as `vigil serve` runs it. */
export interface RetentionRunner {
  /** Runs one expiry now (after the one in progress, if any); resolves with what expired. */
  run(): Promise<ExpiredSegment[]>;
  /**
   * Records the policy in force when it differs from the last one recorded (a JetStream node calls it each time it
   * starts leading).
   */
  recordPolicy(): Promise<void>;
  /** Stops the schedule and waits for an expiry in progress. */
  stop(): Promise<void>;
}

/** The policy as the log records it. */
export function recordedPolicy(s: RetentionSettings): RecordedPolicy {
  return { enabled: s.enabled, days: retentionDays(s), segmentRecords: s.segmentRecords };
}

/**
 * Records the policy in force (when it changed) and, when retention is on, expires segments every
 * `checkSeconds` with the current time in the command context. One expiry at a time.
 */
export async function startRetention(
  deps: ExpiryDeps,
  now: () => Date,
  log: (line: Record<string, unknown>) => void,
): Promise<RetentionRunner> {
  const policy = recordedPolicy(deps.settings);
  const recordPolicy = async () => {
    const recorded = await deps.pipeline.dispatch({
      decide: (m) => decideRetentionPolicy(m.retention, policy),
      ctx: { now: now().toISOString() },
    });
    if (recorded.ok && recorded.result.changed) log({ level: 'info', msg: 'retention policy recorded', ...policy });
  };
  await recordPolicy();
  let running: Promise<ExpiredSegment[]> = Promise.resolve([]);
  let stopped = false;
  const run = (): Promise<ExpiredSegment[]> => {
    running = running
      .catch(() => [])
      .then(async () => {
        if (stopped) return [];
        const expired = await expireSegments(deps, { now: now().toISOString() });
        for (const e of expired) log({ level: 'info', msg: 'log segment expired', ...e });
        return expired;
      });
    return running;
  };
  const timer = deps.settings.enabled
    ? setInterval(() => {
        run().catch((err: unknown) =>
          log({ level: 'error', msg: 'retention expiry failed', error: (err as Error).message }),
        );
      }, deps.settings.checkSeconds * 1000)
    : undefined;
  timer?.unref();
  return {
    run,
    recordPolicy,
    async stop() {
      if (timer) clearInterval(timer);
      stopped = true;
      await running.catch(() => undefined);
    },
  };
}
