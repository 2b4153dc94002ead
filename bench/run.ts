import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { collectorBench } from './collector.js';
import { consoleBench } from './console.js';
import { consolePagesBench } from './console-pages.js';
import { detectionBench } from './detection.js';
import { foundationBench, type Figure } from './foundation.js';
import { root } from './harness.js';
import { normalizerBench } from './normalizers.js';
import { overloadBench } from './overload.js';
import { transparencyBench } from './transparency.js';
import { sigmahqBench } from './sigmahq.js';
import { exportBench } from './export.js';
import { shippersBench } from './shippers.js';
import { scaleoutBench } from './scaleout.js';
import { retentionBench } from './retention.js';
import { listingBench } from './listing.js';
import { machineBench } from './machine.js';
import { hostileRulesBench } from './hostile-rules.js';
import { signedHeadsBench } from './signed-heads.js';
import { liveAuditBench } from './live-audit.js';
import { exceptionsBench } from './exceptions.js';
import { ruleQualityBench } from './rule-quality.js';
import { planBench } from './plan.js';
import { intelIngestBench } from './intel-ingest.js';
import { intelBench } from './intel.js';
import { intelReadersBench } from './intel-readers.js';
import { huntBench } from './hunt.js';

const SECTIONS: Record<string, (report: Record<string, unknown>) => Promise<Figure[]>> = {
  machine: () => machineBench(),
  normalizers: () => normalizerBench(),
  detection: () => detectionBench(),
  collector: (r) => collectorBench(r),
  foundation: (r) => foundationBench(r),
  overload: () => overloadBench(),
  transparency: () => transparencyBench(),
  console: () => consoleBench(),
  sigmahq: () => sigmahqBench(),
  export: () => exportBench(),
  'console-pages': () => consolePagesBench(),
  shippers: () => shippersBench(),
  scaleout: (r) => scaleoutBench(r),
  retention: () => retentionBench(),
  listing: () => listingBench(),
  'hostile-rules': () => hostileRulesBench(),
  'signed-heads': () => signedHeadsBench(),
  'live-audit': () => liveAuditBench(),
  exceptions: () => exceptionsBench(),
  'rule-quality': () => ruleQualityBench(),
  plan: () => planBench(),
  intel: () => intelBench(),
  'intel-ingest': () => intelIngestBench(),
  'intel-readers': () => intelReadersBench(),
  hunt: () => huntBench(),
};

const [only, mode] = process.argv.slice(2);

/**
 * The longest a section may run (the longest takes about 6 minutes here); VIGIL_BENCH_SECTION_TIMEOUT_MIN overrides it.
 */
const timeoutSetting = Number(process.env.VIGIL_BENCH_SECTION_TIMEOUT_MIN);
const SECTION_TIMEOUT_MIN = timeoutSetting > 0 ? timeoutSetting : 30;

/**
 * What each thread of process `pid` waits in, from /proc; the first is the main thread (`do_epoll_wait`: an idle event
 * loop, a `futex` wait: a lock).
 */
function threadWaits(pid: number): string {
  try {
    return readdirSync(`/proc/${pid}/task`)
      .map((tid) => {
        const read = (f: string) => {
          try {
            return readFileSync(`/proc/${pid}/task/${tid}/${f}`, 'utf8').trim();
          } catch {
            return '?';
          }
        };
        return `${tid} ${read('comm')}: ${read('wchan')}`;
      })
      .join('\n');
  } catch {
    return 'not readable';
  }
}

/**
 * Runs one section in a child process. A section that has not finished after SECTION_TIMEOUT_MIN
 * is a defect, not a slow machine: what its threads wait in is printed, it is killed, and the run
 * fails instead of waiting for ever.
 */
function runSection(name: string): Promise<{ status: number | null; stdout: string; timedOut: boolean }> {
  return new Promise((resolveRun) => {
    const child = spawn(process.execPath, [fileURLToPath(import.meta.url), name, '--child'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      stdout += c;
    });
    const timer = setTimeout(() => {
      timedOut = true;
      process.stderr.write(
        `bench section ${name} has run for ${SECTION_TIMEOUT_MIN} minutes; its threads wait ` +
          `in:\n${threadWaits(child.pid!)}\n`,
      );
      child.kill('SIGKILL');
    }, SECTION_TIMEOUT_MIN * 60_000);
    child.once('close', (status) => {
      clearTimeout(timer);
      resolveRun({ status, stdout, timedOut });
    });
  });
}

if (mode === '--child') {
  // One section in a fresh process, so the heap one section leaves behind does not slow the next.
  const report: Record<string, unknown> = {};
  const figures = await SECTIONS[only!]!(report);
  process.stdout.write(`${JSON.stringify({ figures, report })}\n`);
} else {
  const names = only ? [only] : Object.keys(SECTIONS);
  const report: Record<string, unknown> = { at: new Date().toISOString(), node: process.version, cpus: cpus().length };
  const sections: Array<[string, Figure[]]> = [];
  const failed: string[] = [];
  for (const name of names) {
    if (!SECTIONS[name]) throw new Error(`unknown section ${name}; one of ${Object.keys(SECTIONS).join(', ')}`);
  }
  for (const name of names) {
    const child = await runSection(name);
    // A failed section is reported and the others still run: one broken section does not cost the
    // figures of the rest, and the run still fails at the end.
    if (child.status !== 0) {
      failed.push(name);
      const why = child.timedOut
        ? ` (no result after ${SECTION_TIMEOUT_MIN} minutes)`
        : ` (exit ${child.status}; its error is above)`;
      process.stdout.write(`\n## ${name}\nFAILED${why}\n`);
      continue;
    }
    const out = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as {
      figures: Figure[];
      report: Record<string, unknown>;
    };
    sections.push([name, out.figures]);
    Object.assign(report, out.report);
    process.stdout.write(`\n## ${name}\n`);
    const width = Math.max(...out.figures.map((f) => f.name.length));
    for (const f of out.figures)
      process.stdout.write(
        `${f.name.padEnd(width)}  ${String(f.value).padStart(10)} ${f.unit}${f.note ? `  (${f.note})` : ''}\n`,
      );
  }
  report.sections = Object.fromEntries(sections);
  if (failed.length > 0) report.failed = failed;
  const dir = join(root, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `bench-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`\nreport: ${file}\n`);
  if (failed.length > 0) {
    process.stderr.write(`bench sections failed: ${failed.join(', ')}\n`);
    process.exitCode = 1;
  }
}
