import { join } from 'node:path';
import { decideFeedUpdate } from '../src/commands/intel-feeds.js';
import { openInstanceStore, type InstanceStore } from '../src/cli/instance/open.js';
import { readIndicatorList } from '../src/detection/intel/lists.js';
import { mixedBatches } from './detection.js';
import type { Figure } from './foundation.js';
import { median, percents, scratch, sharesInTurn } from './harness.js';
import { indicator } from './intel.js';

const INDICATORS = 1_000_000;
const ROUNDS = 3;
const NOW = '2026-11-22T10:00:00.000Z';
/** Indicators one recorded update carries in this bench (a fetch of a million is recorded in ten). */
const PER_UPDATE = 100_000;

const rssMiB = () => Math.round(process.memoryUsage().rss / 1024 / 1024);

/**
 * Issue 60's figures through the real ingest path: a list of 1,000,000 indicators of mixed kinds imported (read,
 * decided, recorded and indexed: the time reported), the RSS that added, then three stores take the same batches in
 * turn (ingestInTurn charges each the CPU of its own): none, a control store without indicators too (the spread), and
 * the one with the million active. Target: with / without >= 90 %.
 */
export async function intelIngestBench(): Promise<Figure[]> {
  const ctx = { now: NOW };
  const stores: Array<{ name: string; inst: InstanceStore }> = [];
  for (const name of ['none', 'control'])
    stores.push({ name, inst: await openInstanceStore(join(scratch(`intel-${name}`), 'store')) });
  const inst = await openInstanceStore(join(scratch('intel-1m'), 'store'));
  const rssBefore = rssMiB();
  const t0 = performance.now();
  // The list as a feed serves it: one value a line, its type guessed per line.
  const text = Array.from({ length: INDICATORS }, (_, i) => indicator(i).anyOf[0]![0]!.value).join('\n');
  const set = readIndicatorList(text, 'auto');
  const readMs = performance.now() - t0;
  for (let i = 0; i < set.indicators.length; i += PER_UPDATE) {
    const part = { indicators: set.indicators.slice(i, i + PER_UPDATE), unsupported: i === 0 ? set.unsupported : [] };
    const update = { feed: 'bench', kind: 'list' as const, version: `v${i}`, set: part, mode: 'merge' as const };
    const r = await inst.writer.execute((m) => decideFeedUpdate(m.intel, update, NOW), ctx);
    if (!r.ok) throw new Error(`the bench list was refused: ${r.rejection.message}`);
  }
  const importMs = performance.now() - t0;
  global.gc?.();
  const rssAfter = rssMiB();
  const held = inst.reads.intel.index.size;
  stores.push({ name: '1m', inst });
  const turns = await sharesInTurn(
    stores.map((s) => s.inst),
    ROUNDS,
    (round) => mixedBatches(NOW, round * 40_000),
    NOW,
  );
  const figures: Figure[] = [
    {
      name: `import of a ${INDICATORS.toLocaleString('en')}-indicator list (read, recorded, indexed)`,
      value: Math.round(importMs) / 1000,
      unit: 's',
      note: `${held.toLocaleString('en')} indicators active; reading the list ${Math.round(readMs) / 1000} s`,
    },
    { name: '  RSS added by them', value: rssAfter - rssBefore, unit: 'MiB', note: `${rssBefore} -> ${rssAfter} MiB` },
  ];
  for (const s of stores.slice(1)) {
    const shares = turns.shares(s.inst);
    figures.push({
      name:
        s.name === 'control'
          ? '  ingest, a control store without indicators / none'
          : `  ingest with ${INDICATORS.toLocaleString('en')} active indicators / none`,
      value: Math.round(median(shares) * 1000) / 10,
      unit: '%',
      note: `median of rounds ${percents(shares)}${s.name === 'control' ? '; the spread' : '; target >= 90 %'}`,
    });
  }
  for (const s of stores) await s.inst.close();
  return figures;
}
