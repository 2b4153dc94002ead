/**
 * Writes a screenshot of every console page to docs/console/ (`npm run screenshots`): a real
 * `vigil serve` with seeded alerts, an incident, reviews and notes, seen by Debian's Chromium.
 */
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { batches } from '../../src/cli/rules-commands.js';
import { repoPath } from '../helpers/paths.js';
import { WEBSHELL_RULE_ID, seedAlerts, signIn, startConsoleHarness } from './harness.js';

const OUT = repoPath('docs', 'console');

/** Failed sshd logons on a few hosts, so the charts show more than one source. */
function sshFailures(n: number): unknown[] {
  const now = Date.now();
  return Array.from({ length: n }, (_, i) => {
    const host = `bastion-${i % 3}`;
    const time = new Date(now - (i % 20) * 3_600_000 - i * 1000).toISOString();
    return {
      schemaVersion: 1, id: `ssh-${i}`, category: 'identity', class: 'authentication', activity: 'logon', outcome: 'failure', time, ingestedAt: time,
      source: { adapter: 'linux-journal', instance: host, recordId: `ssh-${i}` }, entityKeys: [`ip:203.0.113.${i % 7}`, `host:${host}`, 'user:root'],
      actor: { user: 'root' }, sourceEndpoint: { ip: `203.0.113.${i % 7}` }, destinationEndpoint: { host },
      attributes: { SYSLOG_IDENTIFIER: 'sshd', MESSAGE: 'Failed password', src_ip: `203.0.113.${i % 7}`, user: 'root' },
    };
  });
}

/** SigmaHQ's fixture rules as `vigil rules import` sends them, for the detection plan's shots. */
function sigmahqFiles(): Array<{ name: string; text: string }> {
  const root = repoPath('tests', 'fixtures', 'sigmahq', 'rules');
  const out: Array<{ name: string; text: string }> = [];
  const visit = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) visit(p);
      else if (name.endsWith('.yml')) out.push({ name: relative(root, p), text: readFileSync(p, 'utf8') });
    }
  };
  visit(root);
  return out;
}

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  const h = await startConsoleHarness();
  try {
    const ids = await seedAlerts(h, 40);
    const ssh = await h.api('ingestor', '/api/v1/events', { method: 'POST', body: JSON.stringify(sshFailures(60)) });
    if (ssh.status !== 202) throw new Error(await ssh.text());
    await h.api('analyst', '/api/v1/incidents', { method: 'POST', body: JSON.stringify({ alertIds: ids.slice(0, 3), title: 'Webshell campaign', reason: 'same uploader pattern' }) });
    await h.api('analyst', '/api/v1/alerts/reviews', { method: 'POST', body: JSON.stringify({ alertIds: ids.slice(10, 20), status: 'dismissed', disposition: 'benign', reason: 'web team deploy' }) });
    await h.api('analyst', `/api/v1/alerts/${ids[0]}`, { method: 'PATCH', body: JSON.stringify({ status: 'in_review', reason: 'checking the uploader', disposition: 'true_positive' }) });
    await h.api('analyst', `/api/v1/alerts/${ids[0]}/assignee`, { method: 'PUT', body: JSON.stringify({ assignee: 'analyst-user', reason: 'mine' }) });
    await h.api('analyst', `/api/v1/alerts/${ids[0]}/notes`, { method: 'POST', body: JSON.stringify({ text: 'asked the web team whether this upload was theirs' }) });
    const incident = ((await (await h.api('viewer', '/api/v1/incidents')).json()) as Array<{ id: string }>)[0]!.id;

    const context = await h.browser.newContext({ viewport: { width: 1360, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${h.url}/sign-in`);
    await page.screenshot({ path: `${OUT}/sign-in.png` });
    await signIn(page, h.url, h.tokens.admin);
    const pages: Array<[string, string]> = [
      ['overview', '/'],
      ['alert-queue', '/alerts'],
      ['alert-detail', `/alerts/${ids[0]}`],
      ['incidents', '/incidents'],
      ['incident-detail', `/incidents/${incident}`],
      ['graph', '/graph?entity=host%3Abastion-0'],
      ['events', '/events?adapter=linux-journal'],
      ['rules', '/rules'],
      ['rule-detail', `/rules/${WEBSHELL_RULE_ID}`],
      ['audit-trail', '/audit'],
    ];
    for (const [name, path] of pages) {
      await page.goto(`${h.url}${path}`);
      if (name === 'alert-detail') await page.locator('#evidence details summary').first().click();
      if (name === 'alert-queue') await page.locator('details.group summary').first().click();
      await page.screenshot({ path: `${OUT}/${name}.png`, fullPage: name !== 'events' && name !== 'audit-trail' });
      process.stdout.write(`${OUT}/${name}.png\n`);
    }
    // Hunt: the failed logons of the last day, their histogram, the top hosts reporting them, one event expanded.
    await page.goto(`${h.url}/hunt?q=${encodeURIComponent('class:authentication and outcome:failure')}&top=source.instance`);
    await page.locator('details.hunt-event summary').first().click();
    await page.evaluate('window.scrollTo(0, 0)');
    await page.screenshot({ path: `${OUT}/hunt.png` });
    process.stdout.write(`${OUT}/hunt.png\n`);
    // Exceptions: one made from an alert (saved), a second being previewed from another alert's page.
    const draft = (await (await h.api('analyst', `/api/v1/alerts/${ids[5]}/exception-draft`)).json()) as Record<string, unknown>;
    const made = await h.api('analyst', '/api/v1/exceptions', { method: 'POST', body: JSON.stringify({ ...draft, reason: 'the upload test rig', ticket: 'CHG-123' }) });
    if (made.status !== 201) throw new Error(await made.text());
    const exceptionId = ((await made.json()) as { id: string }).id;
    await page.goto(`${h.url}/exceptions`);
    await page.screenshot({ path: `${OUT}/exceptions.png` });
    await page.goto(`${h.url}/exceptions/${exceptionId}`);
    await page.screenshot({ path: `${OUT}/exception-detail.png`, fullPage: true });
    await page.goto(`${h.url}/exceptions/new?fromAlert=${ids[6]}`);
    await page.fill('#reason', 'the second upload rig');
    await Promise.all([page.waitForURL(/\/exceptions\/preview/), page.click('button[formaction="/exceptions/preview"]')]);
    await page.screenshot({ path: `${OUT}/exception-preview.png`, fullPage: true });
    process.stdout.write(`${OUT}/exceptions.png, exception-detail.png, exception-preview.png\n`);
    // Threat intelligence: the APT1 report posted as a feed, a DNS query for one of its domains, the feeds page and the
    // indicator search, and the alert that explains the match.
    const apt1 = readFileSync(repoPath('tests', 'fixtures', 'stix-2.1', 'apt1.json'), 'utf8');
    await h.api('rule_admin', '/api/v1/intel/bundles?feed=apt1', { method: 'POST', body: apt1 });
    const dns = { ts: Math.floor(Date.now() / 1000) - 120, uid: 'Cshot', 'id.orig_h': '10.4.4.4', 'id.orig_p': 53010, 'id.resp_h': '10.0.0.53', 'id.resp_p': 53, proto: 'udp', query: 'www.arrowservice.net', qtype_name: 'A' };
    const intelAnswer = (await (await h.api('ingestor', '/api/v1/ingest/network-monitor?logType=dns', { method: 'POST', body: JSON.stringify([dns]) })).json()) as { alerts: Array<{ id: string; ruleId: string }> };
    await page.goto(`${h.url}/intel?q=arrowservice`);
    await page.screenshot({ path: `${OUT}/threat-intel.png`, fullPage: true });
    const intelAlert = intelAnswer.alerts.find((a) => a.ruleId === 'vigil.threat-intel-match');
    if (intelAlert) {
      await page.goto(`${h.url}/alerts/${intelAlert.id}`);
      await page.screenshot({ path: `${OUT}/threat-intel-alert.png`, fullPage: true });
    }
    process.stdout.write(`${OUT}/threat-intel.png, threat-intel-alert.png\n`);
    // The detection plan with SigmaHQ's rules imported (after the other shots, which show the seeded rules only): the
    // grouped view, and the ATT&CK coverage matrix on its own.
    for (const files of batches(sigmahqFiles(), 512 * 1024)) {
      const res = await h.api('rule_admin', '/api/v1/rules/bulk', { method: 'POST', body: JSON.stringify({ files }) });
      if (res.status !== 201) throw new Error(await res.text());
    }
    await page.goto(`${h.url}/plan`);
    await page.screenshot({ path: `${OUT}/detection-plan.png` });
    process.stdout.write(`${OUT}/detection-plan.png\n`);
    await page.locator('.attack-matrix').screenshot({ path: `${OUT}/attack-matrix.png` });
    process.stdout.write(`${OUT}/attack-matrix.png\n`);
    await context.close();
  } finally {
    await h.close();
  }
}

await main();
