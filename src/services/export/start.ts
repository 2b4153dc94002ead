import { decideExportConfiguration, decideExportState } from '../../commands/export-state.js';
import type { Pipeline } from '../../commands/pipeline.js';
import type { WriteModels } from '../../projections/models.js';
import type { EventLog } from '../../log/event-log.js';
import type { ExportsState } from '../../projections/exports.js';
import { targetOf, type ExportConfig } from './config.js';
import { fileCursor, type CursorStore } from './cursor.js';
import { startDestination, type DestinationRunner, type DestinationStatus } from './destination.js';
import { createSender } from './senders.js';

/** The running export: each destination's status, and how to stop. */
export interface Exports {
  status(): DestinationStatus[];
  stop(): Promise<void>;
}

/** What starting export needs from the instance. */
export interface ExportDeps {
  readonly storePath: string;
  /** Names this instance in every delivered item's id (the log's checkpoint origin). */
  readonly origin: string;
  readonly log: Pick<EventLog, 'read' | 'head' | 'follow'>;
  readonly pipeline: Pipeline<WriteModels>;
  readonly logLine: (line: Record<string, unknown>) => void;
  readonly now?: () => number;
  /** Where each destination's cursor is kept: a file under the store unless given (the log, on a cluster). */
  readonly cursorOf?: (name: string) => CursorStore;
}

/** The destinations as the log records them: where each goes and what it carries, never a secret. */
export function summaries(config: ExportConfig) {
  return config.destinations.map((d) => ({
    name: d.name,
    kind: d.kind,
    target: targetOf(d),
    carries: [...d.carries],
    ...(d.events ? { events: { ...d.events } } : {}),
    includeRaw: d.includeRaw,
  }));
}

const nowIso = (now: () => number) => new Date(now()).toISOString();

/**
 * Starts export as configured: records the configuration in force when it changed (so enabling,
 * changing and disabling are audited), then one runner per destination following the durable log.
 * With no destination nothing is started and nothing leaves the machine.
 */
export async function startExports(config: ExportConfig, deps: ExportDeps): Promise<Exports> {
  const now = deps.now ?? Date.now;
  const ctx = () => ({ now: nowIso(now), actor: { id: 'vigil', authentication: 'service' } });
  // Senders first: a missing or group-readable secret file stops start-up before anything is recorded.
  const senders = config.destinations.map((d) => createSender(d, deps.origin, now));
  await deps.pipeline.dispatch({ decide: (m) => decideExportConfiguration(m.exports, summaries(config)), ctx: ctx() });
  if (config.destinations.length === 0) {
    deps.logLine({ level: 'info', msg: 'export: no destinations configured; nothing leaves this machine' });
    return { status: () => [], stop: async () => undefined };
  }
  const head = deps.log.head().seq;
  const runners: DestinationRunner[] = config.destinations.map((d, i) =>
    startDestination({
      destination: d,
      origin: deps.origin,
      read: (from, to) => deps.log.read(from, to),
      head,
      cursor: deps.cursorOf ? deps.cursorOf(d.name) : fileCursor(deps.storePath, d.name),
      sender: senders[i]!,
      now,
      random: Math.random,
      onState: (o) => {
        deps.logLine({
          level: o.state === 'failing' ? 'warn' : 'info',
          msg: `export destination ${o.destination} ${o.state}`,
          reason: o.reason,
          lagRecords: o.lagRecords,
        });
        const c = ctx();
        // The state change carries a detectable event: the pipeline's detection lets the built-in rule raise its alert.
        deps.pipeline.dispatch({ decide: (m) => decideExportState(m.exports, o, c), ctx: c }).catch((err: unknown) =>
          deps.logLine({
            level: 'error',
            msg: 'export: recording a destination state failed',
            error: (err as Error).message,
          }),
        );
      },
    }),
  );
  const stopFollowing = deps.log.follow(head, (r) => {
    for (const runner of runners) runner.notify(r.seq);
  });
  deps.logLine({
    level: 'info',
    msg: 'export enabled',
    destinations: config.destinations.map(
      (d) => `${d.name} (${d.kind} ${targetOf(d)}: ${d.carries.join(', ')}${d.includeRaw ? ', raw' : ''})`,
    ),
  });
  return {
    status: () => runners.map((r) => r.status()),
    async stop() {
      stopFollowing();
      await Promise.all(runners.map((r) => r.stop()));
    },
  };
}

/**
 * The destinations as the log records their delivery, for a node that does not deliver (a
 * cluster's follower): the cursor of the last batch recorded as delivered and whether one is
 * marked failing, against this node's log head.
 */
export function recordedStatus(config: ExportConfig, exports: ExportsState, head: number): DestinationStatus[] {
  return summaries(config).map((d) => {
    const cursor = Math.min(exports.cursors.get(d.name) ?? 0, head);
    return {
      name: d.name,
      kind: d.kind,
      target: d.target,
      carries: d.carries,
      includeRaw: d.includeRaw,
      cursor,
      head,
      lagRecords: head - cursor,
      state: exports.failing.has(d.name) ? 'failing' : 'delivering',
      delivered: 0,
      failedAttempts: 0,
      deliveredBy: 'leader',
    };
  });
}

/** Export that runs only while this node leads (a JetStream cluster): `lead` starts it, `follow` stops it. */
export interface LeaderExports extends Exports {
  lead(): Promise<void>;
  follow(): Promise<void>;
}

/**
 * Export on a node of a JetStream cluster: the destinations' secrets are checked now, on every
 * node (a follower would otherwise find a missing file only when it takes over); the workers run
 * while the node leads and resume from the cursors the log records (`deps.cursorOf`). While the
 * node follows, its status is what the log records (`recordedStatus`).
 */
export function exportsWhileLeading(config: ExportConfig, deps: ExportDeps): LeaderExports {
  for (const d of config.destinations) createSender(d, deps.origin, deps.now).close();
  let running: Exports | undefined;
  const follow = async () => {
    const r = running;
    running = undefined;
    await r?.stop();
  };
  return {
    // A follower shows what the log records of the leader's delivery, so every node tells the same story.
    status: () => running?.status() ?? recordedStatus(config, deps.pipeline.models.exports, deps.log.head().seq),
    async lead() {
      running ??= await startExports(config, deps);
    },
    follow,
    stop: follow,
  };
}
