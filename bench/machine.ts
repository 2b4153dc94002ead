import { Worker } from 'node:worker_threads';
import type { Figure } from './foundation.js';

/**
 * A fixed unit of integer work repeated until `workerData` ms have passed; the worker answers how
 * many units it did (and their result, so the loop cannot be dropped).
 */
const SPIN = `
const { parentPort, workerData } = require('node:worker_threads');
let x = 0;
let units = 0;
const end = Date.now() + workerData;
while (Date.now() < end) {
  for (let i = 0; i < 100000; i++) x = (x + i * 31) | 0;
  units++;
}
parentPort.postMessage({ units, x });
`;

/**
 * Copies a 64 MiB buffer into another (far past any cache) until `workerData` ms have passed; the
 * worker answers how many MiB it copied.
 */
const COPY = `
const { parentPort, workerData } = require('node:worker_threads');
const from = Buffer.alloc(64 << 20, 1);
const to = Buffer.alloc(64 << 20);
let mib = 0;
const end = Date.now() + workerData;
while (Date.now() < end) { from.copy(to); mib += 64; }
parentPort.postMessage({ units: mib });
`;

/**
 * Writes into fresh 16 MiB allocations (each from the kernel: every 4 KiB page a minor fault, as
 * V8's large objects and LMDB's new pages are) until `workerData` ms have passed; answers MiB.
 */
const FRESH = `
const { parentPort, workerData } = require('node:worker_threads');
let mib = 0;
const end = Date.now() + workerData;
while (Date.now() < end) { new Uint8Array(new ArrayBuffer(16 << 20)).fill(1); mib += 16; }
parentPort.postMessage({ units: mib });
`;

/**
 * Makes 256 KiB strings (past V8's 128 KiB regular objects: each gets pages of its own, mapped
 * for it and unmapped once collected) until `workerData` ms have passed; answers MiB, and the
 * microseconds of each minor page fault it took (the whole time over the faults: what one fresh
 * page costs this process). Where that is high, a large string, array or Map costs far more than
 * writing it, and everything that allocates so (a JSON body decoded whole, V8's old space
 * growing as it promotes) slows with it: the fresh-memory figure above, from large ArrayBuffers
 * whose memory malloc reuses, does not always show it.
 */
const LARGE = `
const { parentPort, workerData } = require('node:worker_threads');
const { readFileSync } = require('node:fs');
const faults = () => Number(readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1].split(' ')[7]);
const source = Buffer.alloc(256 << 10, 'a');
let mib = 0;
let kept = '';
const f0 = faults();
const t0 = Date.now();
while (Date.now() < t0 + workerData) { kept = source.toString('latin1'); mib += 0.25; }
const us = ((Date.now() - t0) * 1000) / Math.max(1, faults() - f0);
parentPort.postMessage({ units: mib, us, kept: kept.length });
`;

/** Runs `threads` workers of `code` at once for `ms`; resolves with each one's answer. */
function answers<M>(code: string, threads: number, ms: number): Promise<M[]> {
  return Promise.all(
    Array.from(
      { length: threads },
      () =>
        new Promise<M>((resolve, reject) => {
          const w = new Worker(code, { eval: true, workerData: ms });
          w.once('message', resolve);
          w.once('error', reject);
        }),
    ),
  );
}
/** Runs `threads` workers of `code` at once for `ms`; resolves with each one's units of work. */
const run = async (code: string, threads: number, ms: number): Promise<number[]> =>
  (await answers<{ units: number }>(code, threads, ms)).map((m) => m.units);
const spin = (threads: number, ms: number) => run(SPIN, threads, ms);

/**
 * How evenly the machine's two cores work: two threads spin at once, three rounds of 2 s, and the
 * slower one's work is given as a share of the faster one's; then the memory copy rate of one
 * thread and of two at once, the rate at which one thread writes fresh pages, and makes large V8
 * objects (page faults cost far more on some virtual machines than on others). On a machine whose
 * cores are equal it is about 100 %; where the hypervisor gives one core less (the guest may still count it as fully
 * busy), every figure that uses both cores at once falls with it, and ratios between a two-core
 * figure and a one-core one (replay against the raw read) move without any change in the code.
 */
export async function coreBalance(label: string): Promise<Figure[]> {
  await spin(2, 300);
  const rounds: Array<[number, number]> = [];
  for (let r = 0; r < 3; r++) {
    const [a, b] = await spin(2, 2000);
    rounds.push([Math.min(a!, b!), Math.max(a!, b!)]);
  }
  const shares = rounds.map(([slow, fast]) => (slow / fast) * 100);
  const median = [...shares].sort((x, y) => x - y)[1]!;
  const fastest = Math.max(...rounds.map(([, fast]) => fast)) / 2;
  // Memory-bound work (JSON, msgpack, LMDB's pages) can slow down where integer work does not.
  const copyOne = (await run(COPY, 1, 2000))[0]! / 2;
  const copyTwo = (await run(COPY, 2, 2000)).reduce((a, b) => a + b, 0) / 2;
  const fresh = (await run(FRESH, 1, 2000))[0]! / 2;
  const [large] = await answers<{ units: number; us: number }>(LARGE, 1, 2000);
  return [
    {
      name: `${label}: two threads at once, the slower one's work as a share of the faster one's`,
      value: Math.round(median * 10) / 10,
      unit: '%',
      note:
        `median of 3 rounds of 2 s: ${shares.map((s) => s.toFixed(1)).join(' / ')} %; about 100 % where both ` +
        `cores are equal`,
    },
    {
      name: `${label}: one thread's work on the faster core`,
      value: Math.round(fastest),
      unit: 'units/s',
      note: '100,000 integer steps a unit',
    },
    {
      name: `${label}: memory copy, one thread`,
      value: Math.round(copyOne),
      unit: 'MiB/s',
      note: '64 MiB buffers, 2 s',
    },
    {
      name: `${label}: memory copy, two threads at once`,
      value: Math.round(copyTwo),
      unit: 'MiB/s',
      note: `both together; ${((copyTwo / copyOne) * 100).toFixed(0)} % of one thread's`,
    },
    {
      name: `${label}: fresh memory written, one thread`,
      value: Math.round(fresh),
      unit: 'MiB/s',
      note:
        `16 MiB allocations, each page new (a minor page fault each); ${((fresh / copyOne) * 100).toFixed(0)} % ` +
        `of the copy rate`,
    },
    {
      name: `${label}: large V8 objects made, one thread`,
      value: Math.round(large!.units / 2),
      unit: 'MiB/s',
      note: `256 KiB strings, each on pages of its own; ${large!.us.toFixed(1)} µs a page fault`,
    },
  ];
}

/** The machine section of `npm run bench`: the cores' balance before anything else runs. */
export function machineBench(): Promise<Figure[]> {
  return coreBalance('machine');
}
