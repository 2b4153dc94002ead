import type { Server } from 'node:http';

/** Requests in flight on a server, and a way to wait until they are answered. */
export interface InFlight {
  /** Resolves once no request is in flight, or after `timeoutMs`. */
  drained(timeoutMs: number): Promise<void>;
}

/** Counts the requests of `server` from their arrival until their response is finished or aborted. */
export function trackInFlight(server: Server): InFlight {
  let count = 0;
  const waiters = new Set<() => void>();
  server.on('request', (_req, res) => {
    count++;
    res.once('close', () => {
      count--;
      if (count === 0) for (const w of [...waiters]) w();
    });
  });
  return {
    drained(timeoutMs) {
      if (count === 0) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          waiters.delete(done);
          resolve();
        };
        const timer = setTimeout(done, timeoutMs);
        timer.unref();
        waiters.add(done);
      });
    },
  };
}

/** How long requests in flight get to be answered after a storage failure before the process stops anyway. */
export const FATAL_DRAIN_MS = 5000;

/**
 * The fatal path of a store failure: the first call stops accepting connections, lets the requests
 * in flight be answered (their writes reject, and the error handler answers 503 "outcome unknown,
 * retry safely"), then calls `stop` (which ends the process). Later calls change nothing.
 */
export function fatalDrain(
  serverOf: () => Server | undefined,
  inFlightOf: () => InFlight | undefined,
  log: (line: Record<string, unknown>) => void,
  stop: (err: Error) => void,
): (err: Error) => void {
  let tripped = false;
  return (err) => {
    if (tripped) return;
    tripped = true;
    log({
      level: 'fatal',
      msg: 'storage failure: answering requests in flight with 503, then stopping',
      error: err.message,
    });
    // The failed commit rejects every write queued with it, some in promises of LMDB's own that
    // nobody awaits; the process is stopping, so they must not end it before the answers are sent.
    process.on('unhandledRejection', (reason) =>
      log({
        level: 'warn',
        msg: 'write rejected after the storage failure',
        error: (reason as Error)?.message ?? String(reason),
      }),
    );
    const server = serverOf();
    server?.close();
    server?.closeIdleConnections();
    // The failing write rejects right after this call returns: let its request reach the error handler first.
    setImmediate(() => {
      void (inFlightOf()?.drained(FATAL_DRAIN_MS) ?? Promise.resolve()).then(() => stop(err));
    });
  };
}
