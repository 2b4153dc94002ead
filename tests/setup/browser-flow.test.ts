import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { runCli } from '../helpers/cli.js';
import { repoPath } from '../helpers/paths.js';
import { tempDir } from '../helpers/temp.js';
import { launchChromium, type TestChromium } from './chromium.js';
import { installAndServe, writeInventory } from './install-run.js';
import { freePort, listeningUrl, startChild, stopChild, waitFor, type Child } from './processes.js';

const dir = tempDir('vigil-setup-browser-');
const children: Child[] = [];
const vms = join(dir.path, 'vms');
const secrets = join(dir.path, 'secrets');

/** Writes a token to a file only its owner can read, in an owner-only folder: the installer reads it from there, never from argv. */
function tokenFile(name: string, token: string): string {
  const path = join(secrets, name);
  writeFileSync(path, `${token}\n`, { mode: 0o600 });
  assert.equal(statSync(path).mode & 0o077, 0);
  return path;
}

/** A screenshot of the page for docs/console/ (only under `npm run screenshots-setup`), the shown-once secrets masked. */
async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env.VIGIL_SCREENSHOTS !== '1') return;
  mkdirSync(repoPath('docs', 'console'), { recursive: true });
  await page.screenshot({ path: repoPath('docs', 'console', `setup-${name}.png`), fullPage: true, mask: [page.locator('.secret input')] });
}

describe('setup authority pages in Chromium against a real installer run', () => {
  let browser: TestChromium;
  let url: string;
  let accountToken: string;
  const clockFile = join(dir.path, 'clock-offset');

  before(async () => {
    mkdirSync(secrets, { mode: 0o700 });
    writeFileSync(clockFile, '0');
    const cfg = join(dir.path, 'authority.json');
    writeFileSync(cfg, JSON.stringify({
      server: { host: '127.0.0.1', port: 0 }, storage: { path: 'authority-store' }, accounts: { file: 'secrets/accounts.json' },
      recovery: { keyFile: 'secrets/recovery.key', heartbeatTimeoutSeconds: 900, checkIntervalSeconds: 1 },
    }));
    const added = runCli(['setup-authority', 'account', 'add', 't-acme', 'alice', '--display-name', 'Alice Operator', '--email', 'alice@example.test', '--config', cfg]);
    assert.equal(added.status, 0, added.stderr);
    accountToken = JSON.parse(added.stdout).token;
    const authority = startChild(['setup-authority', 'serve', '--config', cfg], { env: { VIGIL_TEST_CLOCK_FILE: clockFile } });
    children.push(authority);
    url = await listeningUrl(authority);
    browser = await launchChromium();
  });

  after(async () => {
    await browser?.close();
    for (const c of children) await stopChild(c);
    dir.cleanup();
  });

  it('signs in, creates a session, watches the installer complete it live, follows the console link, then recovers after central_missing', async () => {
    const page = await browser.context.newPage();
    const csp: string[] = [];
    page.on('console', (m) => { if (/Content Security Policy/i.test(m.text())) csp.push(m.text()); });

    await page.goto(`${url}/`);
    assert.equal(new URL(page.url()).pathname, '/sign-in', 'a browser without a session is sent to sign in');
    await screenshot(page, 'sign-in');
    await page.fill('#token', accountToken);
    await page.click('form[action="/sign-in"] button');
    await page.waitForURL(`${url}/`);
    assert.equal(await page.textContent('h1'), 'Deployments');
    assert.match((await page.textContent('.who-name')) ?? '', /Alice Operator/);
    assert.equal((await browser.context.cookies(url)).find((c) => c.name === 'vigil-setup')?.httpOnly, true);

    await page.click('text=Create setup session');
    await page.waitForSelector('#setup-token');
    const setupToken = await page.inputValue('#setup-token');
    assert.match(setupToken, /^lst_[A-Za-z0-9_-]{43}$/);
    assert.ok(!page.url().includes(setupToken), 'the token is never in a URL');
    const command = (await page.textContent('#installer-command')) ?? '';
    assert.ok(command.startsWith(`vigil install --setup-url ${url} --token-file setup-token `), command);
    assert.ok(!command.includes(setupToken), 'the command never carries the token');
    await screenshot(page, 'session-created');

    assert.match((await page.textContent('#session-live')) ?? '', /Waiting for the installer to connect/);
    // Marks this document: a live update keeps it, a reload would lose it (and this page cannot be reloaded: it answered a POST).
    await page.evaluate(() => { (globalThis as unknown as { stayed: boolean }).stayed = true; });

    const port = await freePort();
    const common = ['--setup-url', url, '--yes', '--transport', `directory:${vms}`, '--work-dir', join(dir.path, 'work'), '--central-listen', `127.0.0.1:${port}`, '--snapshot-interval', '1', '--wait-seconds', '120'];
    const first = await installAndServe(vms, ['install', '--token-file', tokenFile('setup-token', setupToken), '--inventory', writeInventory(dir.path), ...common], undefined, undefined, children);
    assert.equal(await first.installer.exited, 0, first.installer.output());

    await page.locator('#dashboard-link').waitFor({ timeout: 120_000 });
    assert.equal(await page.evaluate(() => (globalThis as unknown as { stayed?: boolean }).stayed), true, 'the page updated itself without a reload');
    assert.equal(await page.inputValue('#setup-token'), setupToken, 'the token stays on the page that showed it');
    await page.click('#watch-link');
    await page.waitForSelector('#dashboard-link');
    assert.ok(!(await page.content()).includes(setupToken), 'the session page does not show the token again');
    const dashboard = page.locator('#dashboard-link');
    const text = (await page.textContent('#session-live')) ?? '';
    for (const phase of ['discovery completed', 'central install started', 'central instance configured', 'collectors provisioned', 'awaiting first snapshot']) assert.ok(text.includes(phase), phase);
    assert.match(text, /vm-central/);
    assert.match(text, /systems reporting live/);
    await screenshot(page, 'session-completed');
    const consoleUrl = await dashboard.getAttribute('href');
    assert.equal(consoleUrl, `http://127.0.0.1:${port}/`, 'the console is / of the central instance');
    const [consoleAnswer] = await Promise.all([page.waitForResponse(consoleUrl!), dashboard.click()]);
    assert.equal(consoleAnswer.status(), 303, 'the console sends a browser without a session to sign in');
    await page.waitForURL(`http://127.0.0.1:${port}/sign-in?next=%2F`);
    const summary = JSON.parse(first.installer.output().trim().split('\n').at(-1)!);
    const credential = JSON.parse(readFileSync(summary.consoleCredentialFile, 'utf8')) as { token: string; roles: string[] };
    assert.deepEqual(credential.roles, ['console']);
    await page.fill('#token', credential.token);
    await page.click('form[action="/sign-in"] button[type=submit]');
    await page.waitForURL(consoleUrl!);
    assert.equal(await page.textContent('.brand'), 'Vigil console');
    assert.equal(await page.textContent('h1'), 'Overview', 'the console credential the installer provisioned opens the console at dashboard_url');

    // The central VM goes silent past the heartbeat timeout: the page offers the recovery.
    await page.goto(`${url}/setup-sessions/${summary.sessionId}`);
    await page.evaluate(() => { (globalThis as unknown as { stayed: boolean }).stayed = true; });
    await stopChild(first.instance);
    writeFileSync(clockFile, String(901_000));
    await page.waitForSelector('text=Recovery: the central VM stopped reporting', { timeout: 120_000 });
    assert.equal(await page.evaluate(() => (globalThis as unknown as { stayed?: boolean }).stayed), true, 'the session page updated itself');
    writeFileSync(clockFile, '0');
    await page.goto(`${url}/`);
    await page.waitForSelector('text=lost the central VM');
    await screenshot(page, 'overview');
    await page.goto(`${url}/setup-sessions/${summary.sessionId}`);
    await screenshot(page, 'central-missing');
    await page.click('text=Reveal recovery token');
    assert.equal(new URL(page.url()).pathname, `/setup-sessions/${summary.sessionId}`, 'nothing is revealed before the confirmation is ticked');
    await page.check('input[name=confirm]');
    await page.click('text=Reveal recovery token');
    await page.waitForSelector('#recovery-token');
    const recoveryToken = await page.inputValue('#recovery-token');
    assert.match(recoveryToken, /^lrc_[A-Za-z0-9_-]{43}$/);
    assert.ok(!page.url().includes(recoveryToken));
    assert.match((await page.textContent('#installer-command')) ?? '', /^vigil install --recovery --setup-url /);
    await screenshot(page, 'recovery-token');

    const keyBefore = readFileSync(join(vms, 'vm-central', 'etc/vigil/secrets/deployment-identity.key'), 'utf8');
    const second = await installAndServe(vms, ['install', '--recovery', '--token-file', tokenFile('recovery-token', recoveryToken), '--inventory', writeInventory(dir.path), ...common], undefined, keyBefore, children);
    assert.equal(await second.installer.exited, 0, second.installer.output());
    const recovered = JSON.parse(second.installer.output().trim().split('\n').at(-1)!);
    await page.goto(`${url}/setup-sessions/${recovered.sessionId}`);
    await page.locator('#dashboard-link').waitFor({ timeout: 120_000 });
    assert.match((await page.textContent('h1')) ?? '', /Recovery session/);
    await page.goto(`${url}/setup-sessions/${summary.sessionId}`);
    assert.match((await page.textContent('#session-live')) ?? '', new RegExp(`claimed .* by session ${recovered.sessionId}`));
    assert.deepEqual(csp, [], 'no Content-Security-Policy violation');
    await stopChild(second.instance);
  });
  it('refuses a form posted from another origin of the same site even with a leaked CSRF token', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${url}/`);
    if (new URL(page.url()).pathname === '/sign-in') {
      await page.fill('#token', accountToken);
      await page.click('form[action="/sign-in"] button');
      await page.waitForURL(`${url}/`);
    }
    const csrf = await page.inputValue('form[action="/setup-sessions"] input[name=_csrf]');
    const sessions = async () => (await page.goto(`${url}/`), await page.locator('#sessions tbody tr').count());
    const before = await sessions();
    // Another port of 127.0.0.1 is another origin but the same site, so the SameSite=Strict cookie still goes along.
    const attacker = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><form method="post" action="${url}/setup-sessions"><input type="hidden" name="_csrf" value="${csrf}"><button>win a prize</button></form>`);
    });
    await new Promise<void>((resolve) => attacker.listen(0, '127.0.0.1', resolve));
    try {
      await page.goto(`http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`);
      const [answer] = await Promise.all([page.waitForResponse(`${url}/setup-sessions`), page.click('text=win a prize')]);
      assert.equal(answer.status(), 403);
      assert.equal((await answer.json()).error, 'cross-site request refused');
    } finally {
      attacker.close();
    }
    assert.equal(await sessions(), before, 'no session was created');
    await page.close();
  });
});
