import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { decideImportRules } from '../src/commands/import-rules.js';
import { decideIngestRaw } from '../src/commands/ingest-raw.js';
import { DEFAULT_DETECTION, openInstanceStore } from '../src/instance/open.js';
import { NORMALIZERS } from '../src/normalizers/registry.js';
import { root, scratch } from './harness.js';
import type { Figure } from './foundation.js';
import { journalEntry, zeekConn } from './normalizers.js';
import { detectIn } from '../src/alerting/detection-step.js';
import { detectionSlice } from '../src/commands/slices.js';

/** `n` detection rules: the SigmaHQ sample rules and the built-in pack's single-event rules, copied with new ids. */
function rulePack(n: number): string {
  const sources = [join(root, 'tests', 'fixtures', 'sigma', 'rules'), join(root, 'rules', 'builtin')];
  const texts = sources.flatMap((d) => readdirSync(d).filter((f) => f.endsWith('.yml')).map((f) => readFileSync(join(d, f), 'utf8')))
    .flatMap((t) => t.split(/^---$/m)).filter((t) => /^logsource:/m.test(t) && !/^name:/m.test(t));
  return Array.from({ length: n }, (_, i) => texts[i % texts.length]!.replace(/^id: .*$/m, `id: 00000000-0000-4000-8000-${String(i).padStart(12, '0')}`)).join('\n---\n');
}

/** Ingest + detect throughput, in-process through the writer, with 0, 100 and 1,000 rules (issue 4 targets). */
export async function detectionBench(): Promise<Figure[]> {
  const figures: Figure[] = [];
  let base = 0;
  for (const n of [0, 100, 1000]) {
    const inst = await openInstanceStore(join(scratch(`detect-${n}`), 'store'));
    if (n > 0) {
      const r = await inst.writer.execute((m) => decideImportRules(detectionSlice(m), rulePack(n), 'api'), { now: '2026-11-22T09:00:00.000Z' });
      if (!r.ok) throw new Error(`bench rules do not import: ${r.rejection.message} ${r.rejection.issues?.slice(0, 3).join('; ')}`);
    }
    const zeek = NORMALIZERS.get('network-monitor')!;
    const journal = NORMALIZERS.get('linux-journal')!;
    const batches = Array.from({ length: 40 }, (_, b) => Array.from({ length: 1000 }, (_, i) => {
      const k = b * 1000 + i;
      const record = k % 2 === 0 ? zeekConn(k) : journalEntry(k);
      const r = (k % 2 === 0 ? zeek : journal).normalize(record, { ingestedAt: '2026-11-22T10:00:00.000Z', ...(k % 2 === 0 ? { logType: 'conn' } : {}) });
      return { record, events: r.ok ? r.events : [] };
    }));
    const t0 = performance.now();
    let alerts = 0;
    for (const normalized of batches) {
      const ctx = { now: '2026-11-22T10:00:00.000Z' };
      const out = await inst.writer.execute((m) => detectIn(m, decideIngestRaw(m, { normalizer: 'mixed', normalized }), [], ctx, DEFAULT_DETECTION), ctx);
      if (out.ok) alerts += out.result.detections.alerts.length;
    }
    const rate = 40_000 / ((performance.now() - t0) / 1000);
    if (n === 0) base = rate;
    figures.push({ name: `ingest + detect, ${n} rules (Zeek conn + sshd journal, 1000/batch)`, value: Math.round(rate), unit: 'events/s', note: `${alerts} alerts raised or grown` });
    if (n > 0) figures.push({ name: `  ${n} rules as a share of 0 rules`, value: Math.round((rate / base) * 1000) / 10, unit: '%' });
    await inst.close();
  }
  return figures;
}
