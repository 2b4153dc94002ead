import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { decideImportRules } from '../src/commands/import-rules.js';
import { DEFAULT_RULE_LIMITS } from '../src/detection/rule-limits.js';
import { openInstanceStore } from '../src/cli/instance/open.js';
import { NORMALIZERS } from '../src/normalizers/registry.js';
import { ingestInTurn, root, scratch } from './harness.js';
import type { Figure } from './foundation.js';
import { journalEntry, zeekConn } from './normalizers.js';
import { activeRuleSet, type DetectionState } from '../src/projections/detection.js';

/** `n` detection rules: the SigmaHQ sample rules and the built-in pack's single-event rules, copied with new ids. */
export function rulePack(n: number): string {
  const sources = [join(root, 'tests', 'fixtures', 'sigma', 'rules'), join(root, 'rules', 'builtin')];
  const texts = sources
    .flatMap((d) =>
      readdirSync(d)
        .filter((f) => f.endsWith('.yml'))
        .map((f) => readFileSync(join(d, f), 'utf8')),
    )
    .flatMap((t) => t.split(/^---$/m))
    .filter((t) => /^logsource:/m.test(t) && !/^name:/m.test(t));
  return Array.from({ length: n }, (_, i) =>
    texts[i % texts.length]!.replace(/^id: .*$/m, `id: 00000000-0000-4000-8000-${String(i).padStart(12, '0')}`),
  ).join('\n---\n');
}

/** 40 batches of 1,000 records (numbered from `offset`), Zeek conn and sshd journal failures in turn, normalized. */
export function mixedBatches(ingestedAt: string, offset = 0) {
  const zeek = NORMALIZERS.get('network-monitor')!;
  const journal = NORMALIZERS.get('linux-journal')!;
  return Array.from({ length: 40 }, (_, b) =>
    Array.from({ length: 1000 }, (_, i) => {
      const k = offset + b * 1000 + i;
      const record = k % 2 === 0 ? zeekConn(k) : journalEntry(k);
      const r = (k % 2 === 0 ? zeek : journal).normalize(record, {
        ingestedAt,
        ...(k % 2 === 0 ? { logType: 'conn' } : {}),
      });
      return { record, events: r.ok ? r.events : [] };
    }),
  );
}

/**
 * Ingest + detect throughput, in-process through the writer, with 0, 100 and 1,000 rules (issue 4
 * targets). The three stores take the batches in turn and are charged the CPU time of their own
 * batches (ingestInTurn): the ratios then hold on a busy machine. Wall-clock rates beside.
 */
export async function detectionBench(): Promise<Figure[]> {
  const figures: Figure[] = [];
  const sizes = [0, 100, 1000];
  const stores = [];
  for (const n of sizes) {
    const inst = await openInstanceStore(join(scratch(`detect-${n}`), 'store'));
    if (n > 0) {
      const r = await inst.writer.execute(
        (m) => decideImportRules(m.detection, rulePack(n), 'api', DEFAULT_RULE_LIMITS),
        { now: '2026-11-22T09:00:00.000Z' },
      );
      if (!r.ok)
        throw new Error(
          `bench rules do not import: ${r.rejection.message} ${r.rejection.issues?.slice(0, 3).join('; ')}`,
        );
      activeRuleSet(inst.reads.detection);
    }
    stores.push({ n, inst, cpuMs: 0, wallMs: 0, alerts: 0 });
  }
  const batches = mixedBatches('2026-11-22T10:00:00.000Z');
  const spent = await ingestInTurn(
    stores.map((s) => s.inst),
    batches,
    '2026-11-22T10:00:00.000Z',
  );
  for (const s of stores) Object.assign(s, spent.get(s.inst)!);
  const base = stores[0]!;
  for (const s of stores) {
    const rate = 40_000 / (s.cpuMs / 1000);
    figures.push({
      name: `ingest + detect, ${s.n} rules (Zeek conn + sshd journal, 1000/batch)`,
      value: Math.round(rate),
      unit: 'events/CPU-s',
      note: `${Math.round(40_000 / (s.wallMs / 1000))} events/s wall-clock; ${s.alerts} alerts raised or grown`,
    });
    if (s.n > 0)
      figures.push({
        name: `  ${s.n} rules as a share of 0 rules`,
        value: Math.round((base.cpuMs / s.cpuMs) * 1000) / 10,
        unit: '%',
        note: `${Math.round((base.wallMs / s.wallMs) * 1000) / 10} % wall-clock`,
      });
  }
  for (const s of stores) await s.inst.close();
  return figures;
}
