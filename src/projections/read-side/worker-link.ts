import type { Worker } from 'node:worker_threads';
import type { RootDatabase } from 'lmdb';
import type { FromReadWorker, ToReadWorker } from './protocol.js';

/** A request posted to the worker, waiting for its answer. */
interface Reply {
  readonly resolve: (v: unknown) => void;
  readonly reject: (e: Error) => void;
}

/** A read waiting for the worker to fold record `seq`. */
interface Waiter {
  readonly seq: number;
  readonly resolve: () => void;
}

/**
 * The writer's thread's end of the read side's worker, for the read side to ask it and wait on it: what it has folded,
 * whether it failed or exited, and the requests and reads waiting for it.
 */
export interface WorkerLink {
  readonly worker: Worker;
  readonly onFailure: ((message: string) => void) | undefined;
  applied: number;
  nextId: number;
  failure: string | undefined;
  exited: boolean;
  /** The read side's environment, once opened: reset after each fold so that reads see it. */
  env: RootDatabase | undefined;
  readonly replies: Map<number, Reply>;
  readonly waiters: Set<Waiter>;
  pendingHead: number;
  headScheduled: boolean;
  // The worker keeps the process alive only while someone waits for it.
  waiting: number;
}

/** A link to a worker just started, that has folded nothing yet. */
export function linkTo(worker: Worker, onFailure: ((message: string) => void) | undefined): WorkerLink {
  return {
    worker,
    onFailure,
    applied: 0,
    nextId: 1,
    failure: undefined,
    exited: false,
    env: undefined,
    replies: new Map(),
    waiters: new Set(),
    pendingHead: 0,
    headScheduled: false,
    waiting: 0,
  };
}

/** Counts one more wait on the worker, keeping the process alive while it lasts. */
export function hold(link: WorkerLink): void {
  if (link.waiting++ === 0) link.worker.ref();
}

/** Counts one wait on the worker done, letting the process exit once none is left. */
export function release(link: WorkerLink): void {
  if (--link.waiting === 0) link.worker.unref();
}

/** Takes one message of the worker: its start (`ready`), a fold committed, an answer, or a failure. */
function receive(link: WorkerLink, m: FromReadWorker, ready: () => void): void {
  switch (m.kind) {
    case 'ready':
      link.applied = m.applied;
      ready();
      return;
    case 'applied':
      link.applied = m.seq;
      // Reads after this see what the worker committed, not an older snapshot.
      link.env?.resetReadTxn();
      for (const w of link.waiters)
        if (w.seq <= link.applied) {
          link.waiters.delete(w);
          w.resolve();
        }
      return;
    case 'reply': {
      const r = link.replies.get(m.id);
      link.replies.delete(m.id);
      r?.resolve(m.value);
      return;
    }
    case 'failed':
      link.failure = m.message;
      link.onFailure?.(m.message);
      if (m.id !== undefined) {
        link.replies.get(m.id)?.reject(new Error(m.message));
        link.replies.delete(m.id);
      }
      return;
  }
}

/** Why a request got no answer: the worker exited. */
const gone = () => new Error("the read side's worker has exited");

/**
 * Listens to the worker for as long as it runs (its messages, its exit, its failure); resolves once it has opened its
 * environment, rejects if it fails before.
 */
export function listen(link: WorkerLink): Promise<void> {
  const { worker } = link;
  const ready = new Promise<void>((resolve, reject) => {
    worker.once('error', reject);
    worker.on('message', (m: FromReadWorker) => receive(link, m, resolve));
  });
  // A request still waiting when the worker exits gets no answer from it: the exit refuses it.
  worker.once('exit', () => {
    link.exited = true;
    for (const r of link.replies.values()) r.reject(gone());
    link.replies.clear();
  });
  worker.on('error', (err) => {
    link.failure = err.message;
    link.onFailure?.(`read side worker failed: ${err.message}`);
    for (const r of link.replies.values()) r.reject(err);
    link.replies.clear();
  });
  return ready;
}

/** Posts a request to the worker and resolves with its answer; refused once the worker has exited. */
export function request<T>(link: WorkerLink, m: ToReadWorker & { id: number }): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (link.exited) return reject(gone());
    hold(link);
    link.replies.set(m.id, {
      resolve: (v) => {
        release(link);
        resolve(v as T);
      },
      reject: (e) => {
        release(link);
        reject(e);
      },
    });
    link.worker.postMessage(m);
  });
}

/** A request, refused at once after a failure: the worker's answers can no longer be trusted. */
export function ask<T>(link: WorkerLink, m: ToReadWorker & { id: number }): Promise<T> {
  return link.failure ? Promise.reject(new Error(link.failure)) : request<T>(link, m);
}
