import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fixturePath } from '../helpers/paths.js';
import { startConsoleHarness, type ConsoleHarness } from './harness.js';

/**
 * Issue 60 in Chromium: the threat intelligence page lists the APT1 report's feed with what it could not evaluate and
 * finds an indicator; a DNS query for an APT1 domain raises an alert whose page explains the match; the graph marks the
 * entity the alert names.
 */
describe('threat intelligence in the console, in Chromium', () => {
  let h: ConsoleHarness;
  let alertId: string;
  before(async () => {
    h = await startConsoleHarness();
    const apt1 = readFileSync(fixturePath('stix-2.1', 'apt1.json'), 'utf8');
    const posted = await h.api('rule_admin', '/api/v1/intel/bundles?feed=apt1', { method: 'POST', body: apt1 });
    assert.equal(posted.status, 200, await posted.clone().text());
    const dns = { ts: Math.floor(Date.now() / 1000) - 60, uid: 'Cui1', 'id.orig_h': '10.4.4.4', 'id.orig_p': 53010, 'id.resp_h': '10.0.0.53', 'id.resp_p': 53, proto: 'udp', query: 'www.arrowservice.net', qtype_name: 'A' };
    const res = await h.api('ingestor', '/api/v1/ingest/network-monitor?logType=dns', { method: 'POST', body: JSON.stringify([dns]) });
    const answer = (await res.json()) as { alerts: Array<{ id: string; ruleId: string }> };
    alertId = answer.alerts.find((a) => a.ruleId === 'vigil.threat-intel-match')!.id;
  });
  after(async () => { await h?.close(); });

  it('shows the feed, finds an indicator, explains the alert, and marks the entity in the graph', async () => {
    const { context, page } = await h.signedIn('analyst');
    try {
      await page.goto(`${h.url}/intel`);
      const feeds = await page.locator('#feeds table').innerText();
      assert.match(feeds, /apt1\s+posted\s+ok\s+10/);
      await page.locator('#feeds details summary').first().click();
      assert.match(await page.locator('#feeds details').first().innerText(), /x509-certificate/);
      await page.fill('input[name=q]', 'arrowservice');
      await Promise.all([page.waitForURL(/q=arrowservice/), page.click('form.filters button[type=submit]')]);
      assert.match(await page.locator('#found').innerText(), /arrowservice\.net/);
      assert.match(await page.locator('#found').innerText(), /APT1/);

      await page.goto(`${h.url}/alerts/${alertId}`);
      const facts = await page.locator('dl.facts').nth(1).innerText();
      assert.match(facts, /\[domain-name:value = 'arrowservice\.net'\]/);
      assert.match(facts, /apt1, version/);
      assert.match(facts, /APT1/);
      assert.match(facts, /query = www\.arrowservice\.net/);

      await page.goto(`${h.url}/graph?entity=${encodeURIComponent('ip:10.4.4.4')}`);
      assert.ok((await page.locator('a.intel-mark').count()) >= 1, 'the entity the alert names is marked');
    } finally {
      await context.close();
    }
  });
});
