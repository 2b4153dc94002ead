import type { GraphQuery } from '../graph-query.js';
import type { GraphLimits } from '../graph.js';

/** What the read-side worker is started with. */
export interface ReadWorkerData {
  readonly storePath: string;
  readonly graph: GraphLimits;
  readonly checkpointEvery?: number;
  /** How much lower than the writer's thread the worker's thread runs (a Linux nice value; 0: the same). */
  readonly nice?: number;
  /**
   * One Int32 the writer's thread sets to 1 to halt the worker (a storage failure's exit): the fold
   * reads it between two transactions, where a message would wait for the whole turn.
   */
  readonly halt: SharedArrayBuffer;
}

/** Messages from the writer's thread to the read-side worker. */
export type ToReadWorker =
  | { readonly kind: 'head'; readonly seq: number }
  | { readonly kind: 'graph'; readonly id: number; readonly query: GraphQuery }
  | { readonly kind: 'snapshot'; readonly id: number; readonly name: string }
  | { readonly kind: 'rebuild'; readonly id: number; readonly until: number }
  | { readonly kind: 'settle'; readonly id: number }
  | { readonly kind: 'halt'; readonly id: number }
  | { readonly kind: 'close'; readonly id: number };

/** Messages from the read-side worker. */
export type FromReadWorker =
  | { readonly kind: 'ready'; readonly applied: number }
  | { readonly kind: 'applied'; readonly seq: number }
  | { readonly kind: 'reply'; readonly id: number; readonly value: unknown }
  | { readonly kind: 'failed'; readonly id?: number; readonly message: string };
