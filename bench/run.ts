import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { foundationBench, type Figure } from './foundation.js';
import { root } from './harness.js';
import { normalizerBench } from './normalizers.js';
import { detectionBench } from './detection.js';
import { collectorBench } from './collector.js';

const report: Record<string, unknown> = { at: new Date().toISOString(), node: process.version, cpus: cpus().length };
const sections: Array<[string, Figure[]]> = [];
const only = process.argv[2];

if (!only || only === 'foundation') sections.push(['foundation', await foundationBench(report)]);
if (!only || only === 'normalizers') sections.push(['normalizers', await normalizerBench()]);
if (!only || only === 'detection') sections.push(['detection', await detectionBench()]);
if (!only || only === 'collector') sections.push(['collector', await collectorBench(report)]);

for (const [name, figures] of sections) {
  process.stdout.write(`\n## ${name}\n`);
  const width = Math.max(...figures.map((f) => f.name.length));
  for (const f of figures) process.stdout.write(`${f.name.padEnd(width)}  ${String(f.value).padStart(10)} ${f.unit}${f.note ? `  (${f.note})` : ''}\n`);
}
report.sections = Object.fromEntries(sections);
const dir = join(root, 'bench', 'results');
mkdirSync(dir, { recursive: true });
const file = join(dir, `bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
process.stdout.write(`\nreport: ${file}\n`);
