import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { runCli, startServe, writeTestConfig, type ServeProcess } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';
import { WEBSHELL_RULE, WEBSHELL_RULE_ID } from '../helpers/event-fixtures.js';

/** The roles a console test signs in as. */
export const CONSOLE_ROLES = ['analyst', 'viewer', 'console', 'admin', 'rule_admin', 'ingestor'] as const;
type ConsoleRole = (typeof CONSOLE_ROLES)[number];

/** A marker only raw event attributes carry: a page that shows it shows evidence. */
export const RAW_MARKER = 'raw-marker-user-agent-7f3a';

/** The rule the seeded events match: a PUT of a .php file, over Zeek http logs (tests/helpers/event-fixtures.ts). */
export { WEBSHELL_RULE_ID };

/** A real `vigil serve` on a free loopback port with one credential per role, and a headless Chromium. */
export interface ConsoleHarness {
  readonly url: string;
  readonly serve: ServeProcess;
  readonly browser: Browser;
  readonly tokens: Record<ConsoleRole, string>;
  /** A fresh browser context (its own cookie jar) signed in as `role`, and its first page. */
  signedIn(role: ConsoleRole): Promise<{ context: BrowserContext; page: Page }>;
  /** An API call with a role's bearer token. */
  api(role: ConsoleRole, path: string, init?: RequestInit): Promise<Response>;
  close(): Promise<void>;
}

/** Launches Debian's Chromium headless, with a fresh profile (Playwright passes its own temporary --user-data-dir). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
    timeout: 120_000,
  });
}

/** Starts the instance and the browser; `config` is merged into the test config. */
export async function startConsoleHarness(config: Record<string, unknown> = {}): Promise<ConsoleHarness> {
  const dir = tempDir('vigil-console-');
  const configPath = writeTestConfig(dir.path, config);
  const tokens = {} as Record<ConsoleRole, string>;
  for (const role of CONSOLE_ROLES) {
    const r = runCli(['api-token-generate', `${role}-user`, role, '--config', configPath], { cwd: dir.path });
    if (r.status !== 0) throw new Error(r.stderr);
    tokens[role] = (JSON.parse(r.stdout) as { token: string }).token;
  }
  const serve = await startServe(configPath, dir.path);
  let browser: Browser;
  try {
    browser = await launchChromium();
  } catch (err) {
    serve.proc.kill('SIGTERM');
    await serve.exited;
    throw err;
  }
  const url = serve.url;
  const api = (role: ConsoleRole, path: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${tokens[role]}`);
    if (init.body !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
    return fetch(`${url}${path}`, { ...init, headers });
  };
  return {
    url, serve, browser, tokens, api,
    async signedIn(role) {
      const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
      const page = await context.newPage();
      await signIn(page, url, tokens[role]);
      return { context, page };
    },
    async close() {
      await browser.close().catch(() => {});
      serve.proc.kill('SIGTERM');
      await serve.exited;
      dir.cleanup();
    },
  };
}

/** Signs a page in through the sign-in form with a pasted token. */
export async function signIn(page: Page, url: string, token: string): Promise<void> {
  await page.goto(`${url}/sign-in`);
  await page.fill('#token', token);
  await Promise.all([page.waitForURL((u) => !u.pathname.startsWith('/sign-in')), page.click('form[action="/sign-in"] button[type=submit]')]);
}

/** A Zeek http record: a PUT of `uri` from `orig` to `resp`, `sec` seconds after `base` (epoch seconds). */
function http(orig: string, resp: string, uri: string, sec: number, base: number) {
  return { ts: base + sec, uid: `C${orig.replace(/\./g, '')}${sec}`, 'id.orig_h': orig, 'id.orig_p': 40000 + (sec % 20000), 'id.resp_h': resp, 'id.resp_p': 80, method: 'PUT', uri, host: 'web', user_agent: RAW_MARKER };
}

/**
 * Imports the webshell rule and ingests `n` matching uploads, each between its own two addresses,
 * so each raises its own alert (no two share a system, so none are correlated into an incident).
 * The events are an hour old, so they fall in the overview's 24-hour charts.
 */
export async function seedAlerts(h: ConsoleHarness, n: number): Promise<string[]> {
  const imported = await h.api('rule_admin', '/api/v1/rules', { method: 'POST', body: WEBSHELL_RULE, headers: { 'content-type': 'application/yaml' } });
  if (imported.status !== 201) throw new Error(`rule import: ${imported.status} ${await imported.text()}`);
  const base = Math.floor(Date.now() / 1000) - 3600;
  for (let start = 0; start < n; start += 50) {
    const records = Array.from({ length: Math.min(50, n - start) }, (_, j) => {
      const i = start + j;
      return http(`10.1.${i >> 8}.${i & 255}`, `10.2.${i >> 8}.${i & 255}`, `/upload/shell-${i}.php`, i, base);
    });
    const res = await h.api('ingestor', '/api/v1/ingest/network-monitor?logType=http', { method: 'POST', body: JSON.stringify(records) });
    if (res.status !== 202) throw new Error(`ingest: ${res.status} ${await res.text()}`);
  }
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const res: Response = await h.api('viewer', `/api/v1/alerts?rule=${WEBSHELL_RULE_ID}&limit=1000${cursor ? `&cursor=${cursor}` : ''}`);
    const page = (await res.json()) as { alerts: Array<{ id: string }>; nextCursor: string | null };
    ids.push(...page.alerts.map((a) => a.id));
    cursor = page.nextCursor;
  } while (cursor);
  return ids;
}
