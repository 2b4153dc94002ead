import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { planSummary, type PlanEntry, type PlanSummary } from '../projections/plan.js';
import { CliError } from './cli-error.js';
import { parseCommandArgs, usageError } from './usage.js';

/** What the server answered for one batch (POST /api/v1/rules/bulk). */
interface BatchResult {
  imported: number;
  ruleIds: string[];
  blocked: number;
  blockedByLogsource: Array<{ logsource: string; rules: number }>;
  invalid: Array<{ file: string; document?: number; line?: number; error: string }>;
}

/** Rule files under a directory (or the one file), sorted, with names relative to it. */
function ruleFiles(root: string): Array<{ name: string; path: string }> {
  if (statSync(root).isFile()) return [{ name: root, path: root }];
  const out: Array<{ name: string; path: string }> = [];
  const visit = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (entry.isFile() && /\.ya?ml$/i.test(entry.name)) out.push({ name: relative(root, path), path });
    }
  };
  visit(root);
  return out;
}

/** Files grouped so that each batch's JSON body stays under `maxBytes`; a larger file travels alone. */
export function batches<T extends { name: string; text: string }>(files: readonly T[], maxBytes: number): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  let size = 16;
  for (const f of files) {
    const bytes = Buffer.byteLength(JSON.stringify(f), 'utf8') + 1;
    if (current.length > 0 && (size + bytes > maxBytes || current.length >= 5000)) {
      out.push(current);
      current = [];
      size = 16;
    }
    current.push(f);
    size += bytes;
  }
  if (current.length > 0) out.push(current);
  return out;
}

async function postBatch(
  url: string,
  token: string,
  files: Array<{ name: string; text: string }>,
): Promise<BatchResult> {
  const res = await fetch(new URL('/api/v1/rules/bulk', url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ files }),
  });
  const body = (await res.json().catch(() => ({}))) as { error?: string; issues?: string[] } & Partial<BatchResult>;
  if (res.status === 201) return body as BatchResult;
  if (res.status === 400 && Array.isArray(body.issues)) {
    // No valid rule in the whole batch: every issue is a refusal of one of its files.
    return {
      imported: 0,
      ruleIds: [],
      blocked: 0,
      blockedByLogsource: [],
      invalid: body.issues.map((issue) => ({ file: issue.split(/ document | line |: /, 1)[0] ?? '', error: issue })),
    };
  }
  const hint = res.status === 413 ? ' (lower --batch-bytes below its limits.bodyBytes)' : '';
  throw new CliError(`the server answered ${res.status}: ${body.error ?? 'no error message'}${hint}`, 1);
}

/**
 * The plan's counts for the rules of an import: the plan's own summary function over its entries for those ids, so
 * what the import says and what the plan shows cannot disagree.
 */
export function importPlanSummary(entries: readonly PlanEntry[], ruleIds: ReadonlySet<string>): PlanSummary {
  return planSummary(entries.filter((e) => ruleIds.has(e.ruleId)));
}

/** The summary in one line: `3141 rules: 212 ready, 40 degraded, 2889 blocked (1700 no source connected, ...)`. */
export function planLine(s: PlanSummary): string {
  const problems = Object.entries(s.byProblem)
    .filter(([, n]) => n > 0)
    .map(([p, n]) => `${n} ${p.replace(/_/g, ' ')}`);
  return (
    `${s.rules} rules: ${s.ready} ready, ${s.degraded} degraded, ${s.blocked} blocked, ${s.quarantined} quarantined, ` +
    `${s.disabled} disabled${problems.length > 0 ? ` (${problems.join(', ')})` : ''}`
  );
}

/** Every entry of the server's detection plan, a page of 1,000 at a time. */
async function planEntries(url: string, token: string): Promise<PlanEntry[]> {
  const out: PlanEntry[] = [];
  let cursor: string | null = null;
  do {
    const path: string = `/api/v1/detection-plan?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
    const res = await fetch(new URL(path, url), { headers: { authorization: `Bearer ${token}` } });
    const body = (await res.json().catch(() => ({}))) as { error?: string; rules?: PlanEntry[]; nextCursor?: string };
    if (res.status !== 200 || !Array.isArray(body.rules))
      throw new CliError(`rules import: reading the plan: the server answered ${res.status}: ${body.error ?? ''}`, 1);
    out.push(...body.rules);
    cursor = body.nextCursor ?? null;
  } while (cursor);
  return out;
}

/** `vigil rules ...`; undefined when argv is not a rules command. */
export async function runRulesCommand(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  out: (line: unknown) => void,
  progress: (line: string, done: boolean) => void,
): Promise<number | undefined> {
  if (argv[0] !== 'rules') return undefined;
  const { values, positionals } = parseCommandArgs('rules', argv.slice(1), {
    url: { type: 'string' },
    'batch-bytes': { type: 'string' },
  });
  const [verb, dir] = positionals;
  if (verb !== 'import')
    throw usageError('rules', verb === undefined ? 'rules: expected import' : `rules: unknown subcommand ${verb}`);
  if (!dir || positionals.length !== 2) throw usageError('rules', 'rules import: expected one DIR or FILE');
  const token = env.VIGIL_TOKEN;
  if (!token)
    throw new CliError('rules import: set VIGIL_TOKEN to a rule_admin or admin token (never on the command line)', 2);
  const batchBytes = values['batch-bytes'] === undefined ? 512 * 1024 : Number(values['batch-bytes']);
  if (!Number.isInteger(batchBytes) || batchBytes < 1024)
    throw new CliError('--batch-bytes: expected an integer of at least 1024', 2);
  const url = values.url ?? 'http://127.0.0.1:4173';
  let found: Array<{ name: string; path: string }>;
  try {
    found = ruleFiles(dir);
  } catch (error) {
    throw new CliError(`rules import: cannot read ${dir}: ${(error as Error).message}`, 2);
  }
  if (found.length === 0) throw new CliError(`rules import: no *.yml or *.yaml file under ${dir}`, 2);
  const files = found.map((f) => ({ name: f.name, text: readFileSync(f.path, 'utf8') }));
  const summary = { files: files.length, imported: 0, invalid: [] as BatchResult['invalid'] };
  const ruleIds = new Set<string>();
  let sent = 0;
  const started = Date.now();
  for (const batch of batches(files, batchBytes)) {
    const r = await postBatch(url, token, batch);
    sent += batch.length;
    summary.imported += r.imported;
    for (const id of r.ruleIds) ruleIds.add(id);
    summary.invalid.push(...r.invalid);
    progress(
      `rules import: ${sent}/${files.length} files, ${summary.imported} rules imported, ${summary.invalid.length} ` +
        'refused',
      sent === files.length,
    );
  }
  // What the rules can do is the plan's to say: its entries for these rules, counted by its own summary function.
  const plan = importPlanSummary(await planEntries(url, token), ruleIds);
  progress(`rules import: in the detection plan, ${planLine(plan)}`, true);
  out({
    files: summary.files,
    imported: summary.imported,
    ready: plan.ready,
    degraded: plan.degraded,
    blocked: plan.blocked,
    quarantined: plan.quarantined,
    disabled: plan.disabled,
    byProblem: plan.byProblem,
    byMissingSource: plan.byMissingSource,
    invalid: summary.invalid,
    seconds: Math.round((Date.now() - started) / 100) / 10,
  });
  return summary.invalid.length > 0 ? 1 : 0;
}
