import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROUTES } from '../../src/http/route-table.js';
import { CLI, startServe, writeTestConfig, type ServeProcess } from '../helpers/cli.js';
import { repoPath } from '../helpers/paths.js';
import { tempDir } from '../helpers/temp.js';
import { fencedBlocks, shapeOf, type FencedBlock } from './fenced-blocks.js';

/*
 * Runs the worked examples of docs/api.md, in order, against a real `vigil serve`, as a reader
 * would paste them into bash (curl, jq and openssl are Debian packages: tests/system-packages.mjs).
 *
 * - Every ```sh block of the section is one step; a step followed by a ```json block is an
 *   example, and what it prints must have the shape of that block (keys and value types,
 *   recursively; an array by its first element). A step with no answer block (the set-up) must
 *   print nothing.
 * - Shell variables a step assigns (`ALERT_ID=$(jq ...)`) are carried to the later steps: after each
 *   step the variables named in any step are written to a state file the next one sources.
 * - The docs address the shipped `npm start` instance: the test replaces `http://127.0.0.1:4173`
 *   with its own instance's URL and `npx vigil` with the compiled CLI, and points
 *   `VIGIL_CONFIG` at its config, so the set-up step's `api-token-generate` adds the token to
 *   the instance under test. Loopback administration is off there: every step needs its token.
 * - `VIGIL_UPDATE_EXAMPLES=1` rewrites each answer block with what the service answered (tokens
 *   shown as `vce_…`) instead of comparing, for when a route's answer changes on purpose.
 */

const DOC = 'docs/api.md';
const SECTION = 'Worked examples';
const DOC_URL = 'http://127.0.0.1:4173';
const DOC_CLI = 'npx vigil';
/** Write routes the section names but does not run, each with the reason given there. */
const NOT_RUN = new Set(['post /api/v1/log/checkpoint/cosignatures', 'post /api/v1/intel/feeds/{name}/poll']);

interface Step {
  readonly command: FencedBlock;
  readonly answer: FencedBlock | undefined;
}

/** The section's steps, in document order, and every `sh` block of the whole file. */
function readSteps(markdown: string): { steps: Step[]; shBlocks: FencedBlock[]; sectionStart: number } {
  const start = markdown.indexOf(`\n## ${SECTION}\n`);
  assert.ok(start >= 0, `${DOC} has no "## ${SECTION}" section`);
  const next = markdown.indexOf('\n## ', start + 1);
  const end = next < 0 ? markdown.length : next;
  const blocks = fencedBlocks(markdown);
  const inSection = blocks.filter((b) => b.start > start && b.end <= end);
  const steps: Step[] = [];
  inSection.forEach((b, i) => {
    if (b.lang !== 'sh') return;
    const following = inSection[i + 1];
    const answered = following?.lang === 'json' && following.before.trim() === '';
    steps.push({ command: b, answer: answered ? following : undefined });
  });
  return { steps, shBlocks: blocks.filter((b) => b.lang === 'sh'), sectionStart: start };
}

/** Method and path of each curl command of a step (line continuations joined). */
function curlCalls(text: string): Array<{ method: string; path: string }> {
  const out: Array<{ method: string; path: string }> = [];
  for (const [cmd] of text.replace(/\\\n/g, ' ').matchAll(/\bcurl\b[^\n]*/g)) {
    const url = /"\$VIGIL(\/[^"?\s]*)/.exec(cmd);
    if (!url) continue;
    const method = /-X ([A-Z]+)/.exec(cmd)?.[1] ?? (/\s(-d|--data-binary)\s/.test(cmd) ? 'POST' : 'GET');
    out.push({ method: method.toLowerCase(), path: url[1]! });
  }
  return out;
}

/** Whether a concrete path (segments `$VAR` written `{}`) fits a route template. */
function fits(template: string, path: string): boolean {
  const t = template.split('/');
  const p = path.replace(/\$[A-Z_]+/g, '{}').split('/');
  return t.length === p.length && t.every((s, i) => s === p[i] || (s.startsWith('{') && s.endsWith('}')));
}

/** Runs one step in `cwd` with bash, carrying `names` through `state`; answers its stdout. */
function runStep(step: Step, cwd: string, env: NodeJS.ProcessEnv, names: readonly string[]): string {
  const text = step.command.text.replaceAll(DOC_URL, env.VIGIL_TEST_URL!).replaceAll(DOC_CLI, `"${process.execPath}" "${CLI}"`);
  const save = names.map((n) => `if [ -n "\${${n}+x}" ]; then printf 'export %s=%q\\n' ${n} "$${n}"; fi`).join('\n');
  const script = `set -euo pipefail\nif [ -f state.sh ]; then . ./state.sh; fi\n${text}\n{\n${save}\n} > state.sh\n`;
  const r = spawnSync('bash', ['-c', script], { cwd, env, encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, `${DOC}:${step.command.line} (${step.command.heading}) failed (${r.status}): ${r.stderr}`);
  return r.stdout;
}

/** The answer with secrets a reader must not copy shown as their prefix only. */
function redacted(value: unknown): unknown {
  if (typeof value === 'string') return /^(vgl|vce|lce)_[A-Za-z0-9_-]{20,}$/.test(value) ? `${value.slice(0, 4)}…` : value;
  if (Array.isArray(value)) return value.map(redacted);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redacted(v)]));
  return value;
}

async function waitForToken(cwd: string, env: NodeJS.ProcessEnv): Promise<void> {
  // The running service reads a changed credentials file within a second; the reader waits as long.
  for (let i = 0; i < 100; i++) {
    const r = spawnSync('bash', ['-c', '. ./state.sh; curl -s -o /dev/null -w "%{http_code}" -H "authorization: Bearer $VIGIL_TOKEN" "$VIGIL/api/v1/me"'], { cwd, env, encoding: 'utf8' });
    if (r.stdout === '200') return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail('the token the set-up step made was never accepted');
}

describe('docs/api.md worked examples', () => {
  const markdown = readFileSync(repoPath(DOC), 'utf8');
  const { steps, shBlocks, sectionStart } = readSteps(markdown);

  it('keeps every shell example of the file in the worked examples, where the test runs it', () => {
    const outside = shBlocks.filter((b) => b.start < sectionStart).map((b) => `${DOC}:${b.line}`);
    assert.deepEqual(outside, []);
    assert.ok(steps.filter((s) => s.answer).length >= 10, 'the section lost its examples');
  });

  it('has an example for every POST, PATCH and PUT route, or says why not', () => {
    const calls = steps.flatMap((s) => curlCalls(s.command.text));
    const writes = ROUTES.filter((r) => r.method !== 'get');
    const missing = writes
      .filter((r) => !calls.some((c) => c.method === r.method && fits(r.path, c.path)))
      .map((r) => `${r.method} ${r.path}`)
      .filter((r) => !NOT_RUN.has(r));
    assert.deepEqual(missing, []);
    for (const r of NOT_RUN) assert.ok(markdown.slice(sectionStart).includes(r.split(' ')[1]!), `${r} is not named`);
    for (const c of calls)
      assert.ok(ROUTES.some((r) => r.method === c.method && fits(r.path, c.path)), `no route ${c.method} ${c.path}`);
  });

  it('answers every example with the shape the docs show', async () => {
    for (const tool of ['/usr/bin/curl', '/usr/bin/jq', '/usr/bin/openssl'])
      assert.ok(existsSync(tool), `${tool} is missing: run node tests/system-packages.mjs`);
    const dir = tempDir('vigil-api-examples-');
    const work = join(dir.path, 'reader');
    let serve: ServeProcess | undefined;
    try {
      spawnSync('mkdir', ['-p', work]);
      const config = writeTestConfig(dir.path);
      serve = await startServe(config, dir.path);
      const env = { ...process.env, VIGIL_CONFIG: config, VIGIL_TEST_URL: serve.url };
      const names = [...new Set(steps.flatMap((s) => [...s.command.text.matchAll(/^\s*(?:export\s+)?([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!)))];
      const updates: Array<{ block: FencedBlock; text: string }> = [];
      for (const step of steps) {
        const out = runStep(step, work, env, names);
        if (step.command.text.includes('VIGIL_TOKEN=')) await waitForToken(work, env);
        const where = `${DOC}:${step.command.line} (${step.command.heading})`;
        if (!step.answer) {
          assert.equal(out, '', `${where} has no answer block but printed ${out}`);
          continue;
        }
        let actual: unknown;
        try {
          actual = JSON.parse(out);
        } catch {
          assert.fail(`${where} did not answer one JSON value: ${out}`);
        }
        // Every example shows a route doing its work: an ErrorResponse is a broken example.
        assert.ok(!(actual !== null && typeof actual === 'object' && 'error' in actual), `${where} answered an error: ${out}`);
        if (process.env.VIGIL_UPDATE_EXAMPLES === '1') {
          updates.push({ block: step.answer, text: `${JSON.stringify(redacted(actual), null, 2)}\n` });
          continue;
        }
        assert.deepEqual(shapeOf(actual), shapeOf(JSON.parse(step.answer.text)), `${where}: the answer's shape differs:\n${out}`);
      }
      if (updates.length > 0) {
        let text = markdown;
        for (const u of [...updates].reverse())
          text = `${text.slice(0, u.block.start)}\`\`\`json\n${u.text}\`\`\`${text.slice(u.block.end)}`;
        writeFileSync(repoPath(DOC), text);
      }
    } finally {
      if (serve) {
        serve.proc.kill('SIGTERM');
        await serve.exited;
      }
      dir.cleanup();
    }
  });
});
