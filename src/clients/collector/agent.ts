import { join } from 'node:path';
import { sealEnvelope } from '../../events/collector-protocol/open-envelope.js';
import { PendingBatch } from './batch.js';
import type { AgentConfig } from './config.js';
import { FileTail } from './file-tail.js';
import { hostFacts } from './host-facts.js';
import { startJournal } from './journal-source.js';
import type { AgentKey } from './keys.js';
import { backoffMs, sendOldest, type SendStatus } from './sender.js';
import { Spool } from './spool.js';
import { writeDurable } from './state-files.js';
import { syslogLineEvent } from './syslog-line.js';

/** Waits `ms`, or less when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}

/** What the agent needs from its caller (the CLI reads files and the environment). */
export interface AgentOptions {
  readonly config: AgentConfig;
  readonly bearer: string;
  readonly key: AgentKey;
  readonly log: (level: 'info' | 'warn' | 'error', msg: string, extra?: Record<string, unknown>) => void;
  readonly now?: () => Date;
}

/** A running agent. */
export interface RunningAgent {
  /** Spools what is pending and stops; a request in flight is abandoned (its envelope stays spooled). */
  stop(): Promise<void>;
}

/**
 * Runs the collector: follows the journal and syslog files, gathers host facts, batches by size
 * and time, signs each batch and writes it to the spool (fsync) before sending; one sender sends
 * the spool in order, one request in flight, retrying with backoff and jitter.
 */
export function startAgent(o: AgentOptions): RunningAgent {
  const now = o.now ?? (() => new Date());
  const { config } = o;
  const spool = new Spool(config.stateDir).recover();
  const resume = spool.resumeCursors();
  const pending = new PendingBatch(resume, config.batch);
  const ack = spool.ack();
  const status: SendStatus = {
    lastAttemptAt: null,
    lastAckedAt: ack.ackedAt ?? null,
    lastAckedSequence: ack.lastAcked,
    lastError: null,
    consecutiveFailures: 0,
  };
  const messages: string[] = [];
  let stopped = false;
  let paused = false;
  const abort = new AbortController();
  let wake: () => void = () => {};

  const journal = config.journal.enabled
    ? startJournal(config.journal.command, resume.journal, {
        onEvent: (e, cursor) => pending.add(e, { journal: cursor }, Date.now()),
        onMessage: (level, msg) => {
          messages.push(msg);
          o.log(level, msg);
        },
        now,
      })
    : undefined;
  const tails = config.files.map((f) => new FileTail(f, resume.files?.[f]));

  function spoolBatch(): void {
    const cut = pending.cut(Date.now());
    const sequence = spool.nextSequence();
    const payload = {
      schemaVersion: 1,
      collectorId: config.collectorId,
      sequence,
      collectedAt: now().toISOString(),
      facts: cut.facts,
      events: cut.events,
    };
    spool.append({
      sequence,
      envelope: sealEnvelope(payload, o.key.seed),
      cursors: cut.cursors,
      events: cut.events.length,
    });
    wake();
  }

  function pollFiles(): void {
    for (const t of tails) {
      for (const l of t.poll(config.batch.maxEvents)) {
        pending.add(
          syslogLineEvent(l.line, { path: t.path, ino: l.ino, offset: l.offset }, now()),
          { file: t.path, ino: l.ino, next: l.next },
          Date.now(),
        );
      }
    }
  }

  function writeStatus(backlog: number): void {
    try {
      writeDurable(
        join(config.stateDir, 'status.json'),
        JSON.stringify({
          pid: process.pid,
          at: now().toISOString(),
          backlog,
          paused,
          pendingEvents: pending.size,
          send: status,
          messages: messages.slice(-5),
        }),
      );
    } catch {
      /* status is advisory */
    }
  }

  function tick(): void {
    const backlog = spool.sequences().length;
    // Backpressure: while the spool is full, sources are not read (the journal and files keep the data).
    paused = backlog >= config.maxSpooled;
    if (paused) journal?.pause();
    else {
      journal?.resume();
      pollFiles();
      while (pending.due(Date.now())) spoolBatch();
    }
    writeStatus(backlog);
  }

  const gatherFacts = () => {
    try {
      pending.setFacts(hostFacts(config.collectorId));
    } catch (err) {
      o.log('warn', `host facts: ${(err as Error).message}`);
    }
  };
  gatherFacts();
  const factsTimer = setInterval(gatherFacts, config.facts.intervalMs);
  const ticker = setInterval(tick, Math.min(250, config.batch.maxWaitMs));

  const sender = (async () => {
    while (!stopped) {
      const r = await sendOldest(
        { spool, server: config.server, bearer: o.bearer, key: o.key, retry: config.retry, log: o.log, now, status },
        abort.signal,
      );
      if (r === 'empty') {
        await new Promise<void>((res) => {
          wake = res;
          setTimeout(res, 1000).unref();
        });
        continue;
      }
      status.consecutiveFailures = r === 'retry' ? status.consecutiveFailures + 1 : 0;
      // The server's Retry-After (back-pressure) is a floor under the agent's own backoff.
      if (r === 'retry' && !stopped)
        await sleep(
          Math.max(backoffMs(status.consecutiveFailures - 1, config.retry), status.retryAfterMs ?? 0),
          abort.signal,
        );
    }
  })();

  return {
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(ticker);
      clearInterval(factsTimer);
      journal?.stop();
      pollFiles();
      while (pending.size > 0) spoolBatch();
      for (const t of tails) t.close();
      wake();
      abort.abort();
      await sender;
      writeStatus(spool.sequences().length);
    },
  };
}
