import { join } from 'node:path';
import * as v from 'valibot';
import { batches } from '../src/cli/rules-commands.js';
import { openInstanceStore } from '../src/cli/instance/open.js';
import { decideBulkImport } from '../src/commands/bulk-import-rules.js';
import { DEFAULT_RULE_LIMITS } from '../src/detection/rule-limits.js';
import { ConfigSchema } from '../src/services/config-schema.js';
import { exportRequest, receiverBody, regressionCases } from '../tests/helpers/windows-events.js';
import type { Figure } from './foundation.js';
import { inProcessApp, root, scratch } from './harness.js';
import { journalEntry } from './normalizers.js';
import { sigmahqFiles } from './sigmahq.js';

const RUNS = 20;
/** The target for the plan's first page and each console page, in process. */
const TARGET_MS = 300;

/** The median, 95th percentile and size of `runs` answers of one request. */
async function time(
  request: () => Promise<Response>,
  runs: number,
): Promise<{ p50: number; p95: number; kib: number }> {
  const ms: number[] = [];
  let bytes = 0;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const res = await request();
    const body = await res.text();
    ms.push(performance.now() - t0);
    if (res.status !== 200) throw new Error(`answered ${res.status}: ${body.slice(0, 300)}`);
    bytes = Buffer.byteLength(body);
  }
  ms.sort((a, b) => a - b);
  return {
    p50: ms[Math.floor(ms.length / 2)]!,
    p95: ms[Math.min(ms.length - 1, Math.ceil(ms.length * 0.95) - 1)]!,
    kib: Math.round(bytes / 102.4) / 10,
  };
}

/**
 * The detection plan at rule-set scale (issue 59): SigmaHQ's 3,141 fixture rules installed through the writer, some
 * of their sources sending (an sshd journal, the Windows regression events), then the plan's first page, a filtered
 * page and the `/plan` console page timed in process with app.request, as loopback administration sees them.
 */
export async function planBench(): Promise<Figure[]> {
  const dir = scratch('plan');
  const config = v.parse(ConfigSchema, {
    server: { allowLoopbackAdmin: true },
    auth: { credentialsFile: join(dir, 'credentials.json') },
    storage: { path: join(dir, 'store') },
  });
  const inst = await openInstanceStore(config.storage.path);
  let rules = 0;
  for (const batch of batches(sigmahqFiles(), 512 * 1024)) {
    const r = await inst.writer.execute((m) => decideBulkImport(m.detection, batch, 'api', DEFAULT_RULE_LIMITS), {
      now: new Date().toISOString(),
    });
    if (!r.ok) throw new Error(`SigmaHQ rules do not import: ${r.rejection.message}`);
    rules += r.result.imported;
  }
  const app = inProcessApp(inst, config);
  const post = async (path: string, body: unknown): Promise<void> => {
    const res = await app.request(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status !== 202) throw new Error(`${path} answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  };
  await post('/api/v1/ingest/linux-journal', { records: Array.from({ length: 50 }, (_, i) => journalEntry(i)) });
  const cases = regressionCases(join(root, 'tests', 'fixtures', 'sigmahq'));
  const bodies = cases.slice(0, 40).flatMap((c) => c.events.map((e) => receiverBody(e)));
  await post('/api/v1/ingest/opentelemetry-log', { records: [exportRequest(bodies)] });
  const get =
    (path: string, accept = 'application/json') =>
    () =>
      Promise.resolve(app.request(path, { headers: { accept } }));
  await time(get('/api/v1/detection-plan'), 3);
  const figures: Figure[] = [];
  const timed: Array<[string, () => Promise<Response>]> = [
    [`plan first page p95 with ${rules} rules`, get('/api/v1/detection-plan')],
    [
      'plan filtered page p95 (state=blocked, problem=no_source_connected)',
      get('/api/v1/detection-plan?state=blocked&problem=no_source_connected'),
    ],
    ['plan text search p95 (text=mimikatz)', get('/api/v1/detection-plan?text=mimikatz')],
    ['/plan console page p95 (grouped view, ATT&CK matrix, first 50 entries)', get('/plan', 'text/html')],
  ];
  for (const [name, request] of timed) {
    const r = await time(request, RUNS);
    figures.push({
      name,
      value: Math.round(r.p95 * 10) / 10,
      unit: 'ms p95',
      note: `p50 ${r.p50.toFixed(1)} ms, ${r.kib} KiB; target < ${TARGET_MS} ms`,
    });
  }
  await inst.close();
  return figures;
}
