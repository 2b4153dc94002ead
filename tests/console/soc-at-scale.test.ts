import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { WEBSHELL_RULE_ID, seedAlerts, startConsoleHarness, type ConsoleHarness } from './harness.js';

/**
 * Issue 59 in Chromium against vigil serve: the queue grouped by rule with its facets, an exception made from an
 * alert (prefilled, previewed against history, saved, then keeping that source's uploads from alerting while another
 * source still alerts), and an incident's alerts reviewed at once with its joined alerts collapsed in the timeline.
 */

/** A Zeek http upload of a .php file from `orig` to `resp`, now. */
const upload = (orig: string, resp: string, n: number) => ({
  ts: Math.floor(Date.now() / 1000) - 5, uid: `Cx${n}`, 'id.orig_h': orig, 'id.orig_p': 41000 + n, 'id.resp_h': resp,
  'id.resp_p': 80, method: 'PUT', uri: `/late/shell-${n}.php`, host: 'web',
});

describe('a SOC day at rule-set scale, in Chromium', () => {
  let h: ConsoleHarness;
  let alertIds: string[];
  before(async () => {
    h = await startConsoleHarness();
    // One attacker on 50 hosts: 50 alerts of one rule.
    alertIds = await seedAlerts(h, 50);
  });
  after(async () => { await h?.close(); });

  it('groups the queue by rule (one row of 50, expandable) and filters from its facets', async () => {
    const { context, page } = await h.signedIn('analyst');
    try {
      await page.goto(`${h.url}/alerts`);
      const group = page.locator(`details.group[data-rule="${WEBSHELL_RULE_ID}"]`);
      assert.equal(await group.count(), 1, 'one group for the rule, not 50 rows');
      assert.match(await group.locator('summary').innerText(), /50 alerts/);
      assert.equal(await group.locator('tbody tr').first().isVisible(), false, 'collapsed until opened');
      await group.locator('summary').click();
      assert.equal(await group.locator('tbody tr').first().isVisible(), true);
      assert.ok((await group.locator('tbody tr').count()) >= 1);
      // The severity facet counts the rule's 50 high alerts; its link filters the queue by it.
      const facet = page.locator('section.facet[data-facet=severity]');
      assert.match(await facet.innerText(), /high\s+50/);
      await Promise.all([page.waitForURL(/severity=high/), facet.locator('a[data-value=high]').click()]);
      assert.equal(await page.locator(`details.group[data-rule="${WEBSHELL_RULE_ID}"]`).count(), 1);
      // The rule filter takes the rule's title, not only its id.
      await page.goto(`${h.url}/alerts?rule=${encodeURIComponent('Webshell upload')}&view=grouped`);
      assert.match(await page.locator(`details.group[data-rule="${WEBSHELL_RULE_ID}"] summary`).innerText(), /50 alerts/);
    } finally {
      await context.close();
    }
  });

  it('makes an exception from an alert: prefilled, previewed against history, saved, and it keeps that source quiet', async () => {
    const { context, page } = await h.signedIn('analyst');
    try {
      const id = alertIds[7]!;
      const alert = (await (await h.api('viewer', `/api/v1/alerts/${id}`)).json()) as { affectedSystems: string[] };
      const source = alert.affectedSystems.find((s) => s.startsWith('ip:10.1.'))!.slice(3);
      await page.goto(`${h.url}/alerts/${id}`);
      await Promise.all([page.waitForURL(/\/exceptions\/new\?fromAlert=/), page.click('a[href^="/exceptions/new?fromAlert="]')]);
      assert.equal(await page.inputValue('input[name=ruleId]'), WEBSHELL_RULE_ID);
      assert.match(await page.inputValue('#condition'), new RegExp(`sourceEndpoint\\.ip: ${source.replace(/\./g, '\\.')}`));
      await page.fill('#reason', 'the upload test rig');
      await page.fill('#ticket', 'CHG-123');
      await Promise.all([page.waitForURL(/\/exceptions\/preview/), page.click('button[formaction="/exceptions/preview"]')]);
      const preview = await page.locator('#preview').innerText();
      assert.match(preview, /would have removed 1 of 50 alerts/, preview);
      assert.match(preview, /1 matches/);
      await Promise.all([page.waitForURL(/\/exceptions\/exc_/), page.click('#exception-form button:not([formaction])')]);
      assert.match(await page.locator('h1').innerText(), /Exception exc_\S+ \(active\)/);
      const exceptionId = decodeURIComponent(new URL(page.url()).pathname.split('/').at(-1)!);
      // That source's next upload is kept from alerting; another source's still alerts.
      const ingest = (records: unknown[]) => h.api('ingestor', '/api/v1/ingest/network-monitor?logType=http', { method: 'POST', body: JSON.stringify(records) });
      const quiet = (await (await ingest([upload(source, '10.9.0.1', 1)])).json()) as { alerts: unknown[] };
      assert.deepEqual(quiet.alerts, []);
      const loud = (await (await ingest([upload('10.7.7.7', '10.9.0.2', 2)])).json()) as { alerts: unknown[] };
      assert.equal(loud.alerts.length, 1);
      await page.reload();
      assert.match(await page.locator('dl.facts').innerText(), /Matches kept from alerting\s+1/);
      // Renewed from its page: the whole terms again, a new end and why; its history says so.
      await Promise.all([page.waitForURL(/\/edit$/), page.click('a[href$="/edit"]')]);
      assert.equal(await page.inputValue('#reason'), 'the upload test rig');
      const end = new Date(Date.now() + 14 * 86_400_000).toISOString();
      await page.fill('#expiresAt', end);
      await page.fill('#comment', 'the rig stays two more weeks');
      await Promise.all([page.waitForURL(/notice=Exception/), page.click('#exception-form button:not([formaction])')]);
      const changed = (await (await h.api('viewer', `/api/v1/exceptions/${exceptionId}`)).json()) as { expiresAt: string; history: Array<{ kind: string; comment?: string }> };
      assert.equal(changed.expiresAt, end);
      assert.deepEqual(changed.history.map((x) => x.kind), ['created', 'changed']);
      assert.equal(changed.history[1]!.comment, 'the rig stays two more weeks');
      // The list, whole and for the rule (the rule page links it).
      await page.goto(`${h.url}/exceptions`);
      assert.match(await page.locator('table.data').innerText(), new RegExp(exceptionId));
      assert.match(await page.locator('nav.tabs').innerText(), /active \(1\)/);
      await page.goto(`${h.url}/rules/${WEBSHELL_RULE_ID}`);
      await Promise.all([page.waitForURL(/\/exceptions\?status=active&rule=/), page.click('a[href^="/exceptions?status=active&rule="]')]);
      assert.match(await page.locator('table.data').innerText(), new RegExp(exceptionId));
    } finally {
      await context.close();
    }
  });

  it('reviews all alerts of an incident at once, and collapses the alerts that joined it', async () => {
    const promoted = await h.api('analyst', '/api/v1/incidents', { method: 'POST', body: JSON.stringify({ alertIds: alertIds.slice(20, 30), title: 'One uploader', reason: 'same pattern' }) });
    assert.equal(promoted.status, 201);
    const incident = (await promoted.json()) as { id: string };
    const { context, page } = await h.signedIn('analyst');
    try {
      await page.goto(`${h.url}/incidents/${incident.id}`);
      await page.selectOption('#incident-bulk select[name=scope]', 'all');
      await page.selectOption('#incident-bulk select[name=status]', 'dismissed');
      await page.selectOption('#incident-bulk select[name=disposition]', 'benign');
      await page.fill('#incident-bulk input[name=reason]', 'the web team confirmed the test');
      await Promise.all([page.waitForURL(/notice=/), page.click('#incident-bulk button[type=submit]')]);
      for (const id of alertIds.slice(20, 30)) {
        const a = (await (await h.api('viewer', `/api/v1/alerts/${id}`)).json()) as { status: string; disposition: string };
        assert.deepEqual([a.status, a.disposition], ['dismissed', 'benign'], id);
      }
      const timeline = page.locator('ol.timeline');
      assert.match(await timeline.innerText(), /10 alerts joined/);
      const run = timeline.locator('details.joined');
      assert.equal(await run.locator('li').first().isVisible(), false, 'collapsed');
      await run.locator('summary').click();
      assert.equal(await run.locator('li').count(), 10);
    } finally {
      await context.close();
    }
  });
});
