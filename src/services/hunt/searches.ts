import { Worker } from 'node:worker_threads';
import type { HuntAnswer, HuntJob } from './scan.js';
import type { FromSearchWorker, SearchWorkerData, ToSearchWorker } from './search-worker.js';

/** Too many searches wait already: the caller is told to come back (429). */
export class SearchesBusy extends Error {
  override readonly name = 'SearchesBusy';
}

/** Runs searches of stored evidence in a worker thread of their own, one at a time, in the order asked. */
export interface Searcher {
  /** Runs `query` (already parsed once by the caller, so known to parse) over `job`'s range and bounds. */
  search(query: string, job: HuntJob): Promise<HuntAnswer>;
  /**
   * The export lines (`vigil log export --raw`) of records `seqs`, null where the store no longer holds one; those of
   * the first records only once the lines pass `maxBytes` (at least one).
   */
  lines(seqs: readonly number[], maxBytes: number): Promise<(string | null)[]>;
  stop(): Promise<void>;
}

/** Searches that may wait behind the running one before a new one is refused. */
export const MAX_WAITING_SEARCHES = 16;
/** How long past its deadline a search may run before its worker is ended (and started again for the next). */
const GRACE_MS = 10_000;

interface Pending {
  resolve(a: HuntAnswer | (string | null)[]): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * The searcher of the instance whose store is at `storePath`: the worker (search-worker.ts) starts with the first
 * search and stays; a search running `GRACE_MS` past its own deadline ends it (its answer is then an error).
 */
export function createSearcher(o: { readonly storePath: string; readonly nice: number }): Searcher {
  let worker: Promise<Worker> | undefined;
  let nextId = 1;
  let chain: Promise<unknown> = Promise.resolve();
  let waiting = 0;
  const pending = new Map<number, Pending>();

  const fail = (message: string) => {
    for (const p of pending.values()) {
      clearTimeout(p.timer);
      p.reject(new Error(message));
    }
    pending.clear();
    worker = undefined;
  };
  const start = () =>
    new Promise<Worker>((resolve, reject) => {
      const data: SearchWorkerData = { storePath: o.storePath, nice: o.nice };
      const w = new Worker(new URL('./search-worker.js', import.meta.url), { workerData: data });
      w.unref();
      w.once('message', () => resolve(w));
      w.on('message', (m: FromSearchWorker) => {
        const p = pending.get(m.id);
        if (!p) return;
        pending.delete(m.id);
        clearTimeout(p.timer);
        if ('error' in m) p.reject(new Error(m.error));
        else p.resolve('answer' in m ? m.answer : m.lines);
      });
      w.on('error', (err) => {
        reject(err);
        fail(`the search worker failed: ${err.message}`);
      });
      w.on('exit', () => fail('the search worker stopped'));
    });

  /** Asks the worker `ask` (with its id); ends the worker when no answer came by `deadline` and the grace after it. */
  async function run<T>(ask: (id: number) => ToSearchWorker, deadline: number): Promise<T> {
    worker ??= start();
    const w = await worker;
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(
        () => {
          pending.delete(id);
          reject(new Error('the search ran past its bound and was stopped'));
          void w.terminate();
        },
        Math.max(0, deadline - Date.now()) + GRACE_MS,
      );
      pending.set(id, { resolve: resolve as Pending['resolve'], reject, timer });
      w.postMessage(ask(id));
    });
  }

  /** Runs `task` after every search asked before it, unless too many wait already. */
  function queued<T>(task: () => Promise<T>): Promise<T> {
    if (waiting >= MAX_WAITING_SEARCHES) return Promise.reject(new SearchesBusy('too many searches are waiting'));
    waiting++;
    const next = chain.then(task);
    chain = next.catch(() => undefined).finally(() => waiting--);
    return next;
  }

  return {
    search(query, job) {
      // The deadline counts from when the search starts, not from when it was queued.
      const span = job.deadline - Date.now();
      return queued(() => {
        const deadline = Date.now() + span;
        return run<HuntAnswer>((id) => ({ id, query, job: { ...job, deadline } }), deadline);
      });
    },
    lines: (seqs, maxBytes) =>
      queued(() => run<(string | null)[]>((id) => ({ id, lines: seqs, maxBytes }), Date.now())),
    async stop() {
      const w = worker;
      worker = undefined;
      if (w) await (await w.catch(() => undefined))?.terminate();
    },
  };
}
