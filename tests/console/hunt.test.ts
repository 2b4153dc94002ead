import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { parseHunt, printHunt } from '../../src/detection/hunt/index.js';
import { normalizedEvent } from '../helpers/event-fixtures.js';
import { seedAlerts, startConsoleHarness, type ConsoleHarness } from './harness.js';

/** Whether the hunt language is the real one (it prints pipes back): the histogram and top values need it. */
const realLanguage = (() => {
  const p = parseHunt('class:a | timechart span=1h count()');
  return p.ok && printHunt(p.query).includes('timechart');
})();
const NEEDS_LANGUAGE = realLanguage ? false : 'needs the hunt language (timechart, top), not the stub';

const HOUR = 3_600_000;

/** Authentications over the last 12 hours (alice every third, the rest bob) and as many network events. */
function huntEvents(now: number) {
  return Array.from({ length: 48 }, (_, i) => normalizedEvent({
    id: `hunt-${i}`,
    time: new Date(now - HOUR / 2 - i * (HOUR / 4)).toISOString(),
    ingestedAt: new Date(now).toISOString(),
    ...(i % 2 === 0
      ? { category: 'identity', class: 'authentication', activity: 'logon', actor: { user: i % 3 === 0 ? 'alice' : 'bob' } }
      : {}),
    entityKeys: [`host:web-${i % 4}`],
    source: { adapter: 'linux-journal', instance: `web-${i % 4}`, recordId: `r-${i}` },
  }));
}

/** The events the page lists, by id. */
const shownIds = async (page: Page) =>
  page.locator('details.hunt-event td a[data-field="id"]').allTextContents();
/** The search ids the page reports (one per search it ran, in the facts line). */
const searchId = async (page: Page) => /search (\d+)/.exec(await page.locator('#hunt-facts').innerText())?.[1];

describe('the hunt page in Chromium against vigil serve', () => {
  let h: ConsoleHarness;
  before(async () => {
    h = await startConsoleHarness({ log: { checkpointEverySeconds: 1 } });
    const res = await h.api('ingestor', '/api/v1/events', { method: 'POST', body: JSON.stringify(huntEvents(Date.now())) });
    assert.equal(res.status, 202, await res.text());
  });
  after(async () => { await h?.close(); });

  it('completes a field, runs the query, pivots on a value, saves the query and opens it as a rule, every hunt audited', async () => {
    const { context, page } = await h.signedIn('analyst');
    const ids: string[] = [];
    await page.goto(`${h.url}/hunt`);
    assert.equal(await page.locator('nav a[aria-current=page]').innerText(), 'Hunt');
    // Completion: the start of a field name, Tab takes it with its colon.
    await page.locator('#hunt-q').pressSequentially('clas');
    await page.locator('ul.completer li', { hasText: 'class' }).first().waitFor();
    await page.keyboard.press('Tab');
    assert.equal(await page.locator('#hunt-q').inputValue(), 'class:');
    await page.locator('#hunt-q').pressSequentially('authentication');
    await Promise.all([page.waitForURL(/q=class/), page.locator('#hunt-form button[type=submit]').click()]);
    const all = await shownIds(page);
    assert.equal(all.length, 24, 'every authentication of the last day');
    assert.ok(all.every((id) => Number(id.slice(5)) % 2 === 0));
    ids.push((await searchId(page))!);
    const html = await page.content();
    assert.ok(!/<script(?![^>]*\bsrc=)[^>]*>/.test(html), 'no inline script');
    assert.ok(!/\sstyle=/.test(html), 'no inline style');

    // A row expands to the whole event; a click on a value adds it to the query.
    const alice = page.locator('details.hunt-event').filter({ has: page.locator('td a[data-field="actor.user"]', { hasText: /^alice$/ }) }).first();
    await alice.locator('summary').click();
    await Promise.all([page.waitForURL(/actor\.user/), alice.locator('td a[data-field="actor.user"]').click()]);
    assert.equal(await page.locator('#hunt-q').inputValue(), 'class:authentication and actor.user:"alice"');
    const narrowed = await shownIds(page);
    assert.equal(narrowed.length, 8);
    assert.ok(narrowed.every((id) => Number(id.slice(5)) % 6 === 0), 'only alice\'s');
    ids.push((await searchId(page))!);

    // A second pivot, on the source: what a rule needs for its logsource.
    const first = page.locator('details.hunt-event').first();
    await first.locator('summary').click();
    await Promise.all([page.waitForURL(/source\.adapter/), first.locator('td a[data-field="source.adapter"]').click()]);
    assert.equal(await page.locator('#hunt-q').inputValue(), 'class:authentication and actor.user:"alice" and source.adapter:"linux-journal"');
    assert.equal((await shownIds(page)).length, 8);
    ids.push((await searchId(page))!);

    // Saved in this browser: it is listed after a reload, and opens the hunt.
    await page.locator('#save-name').fill('alice logons');
    await page.locator('#save-button').click();
    await page.reload();
    const saved = page.locator('#saved-list a', { hasText: 'alice logons' });
    assert.equal(await saved.count(), 1);
    assert.match((await saved.getAttribute('href'))!, /actor\.user/);
    ids.push((await searchId(page))!);

    // Save as rule: the rule preview opens with the query's terms in its YAML, and previews it.
    await Promise.all([page.waitForURL(/\/hunt\/rule/), page.locator('#save-as-rule').click()]);
    const yaml = await page.locator('#yaml').inputValue();
    assert.match(yaml, /alice/);
    assert.match(yaml, /authentication/);
    assert.match(yaml, /logsource:/);
    await Promise.all([page.waitForURL(/\/hunt\/rule\/preview/), page.locator('button', { hasText: 'Preview against history' }).click()]);
    const outcome = await page.locator('#rule-preview-result, #rule-errors').first().innerText();
    if (realLanguage) assert.match(outcome, /^What it would have matched[\s\S]*\b8 matches\b/);

    // Each hunt is a HuntSearched record naming the analyst (its proof reads it back from the log).
    assert.equal(new Set(ids).size, ids.length, 'one search per run');
    for (const id of ids) {
      // The proof needs a signed checkpoint (one a second here): the first may not be made yet.
      let res = await h.api('viewer', `/api/v1/search/${id}/proof`);
      for (let tries = 0; res.status === 404 && tries < 150; tries++) {
        await new Promise((r) => setTimeout(r, 200));
        res = await h.api('viewer', `/api/v1/search/${id}/proof`);
      }
      const p = (await res.json()) as { search: { principal: string; query: string } };
      assert.equal(res.status, 200, JSON.stringify(p));
      assert.equal(p.search.principal, 'analyst-user');
      assert.match(p.search.query, /^class:authentication/);
    }
    await context.close();
  });

  it('narrows the range by a drag on the histogram, and shows a field\'s top values one click away', { skip: NEEDS_LANGUAGE }, async () => {
    const { context, page } = await h.signedIn('analyst');
    await page.goto(`${h.url}/hunt?q=${encodeURIComponent('class:authentication')}`);
    const before = (await shownIds(page)).length;
    const svg = page.locator('#hunt-histogram svg[data-histogram]');
    const box = (await svg.boundingBox())!;
    const [x0, x1] = [box.x + box.width * 0.55, box.x + box.width * 0.95];
    await page.mouse.move(x0, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move((x0 + x1) / 2, box.y + box.height / 2);
    await page.mouse.move(x1, box.y + box.height / 2);
    await Promise.all([page.waitForURL(/range=custom/), page.mouse.up()]);
    const url = new URL(page.url());
    const [since, until] = [Date.parse(url.searchParams.get('since')!), Date.parse(url.searchParams.get('until')!)];
    assert.ok(until - since < 24 * HOUR * 0.5, 'a narrower range');
    assert.ok(since > Date.now() - 12 * HOUR, 'the part dragged over');
    const after = await shownIds(page);
    assert.ok(after.length > 0 && after.length < before, `${after.length} of ${before}`);

    await Promise.all([page.waitForURL(/top=actor.user/), page.locator('#field-list a[data-field="actor.user"]').click()]);
    const top = page.locator('#hunt-top table');
    assert.match(await top.innerText(), /alice/);
    await Promise.all([page.waitForURL(/alice/), top.locator('a.pivot', { hasText: /^alice$/ }).click()]);
    assert.match(await page.locator('#hunt-q').inputValue(), /actor\.user:"alice"$/);
    await context.close();
  });

  it('links an alert to a hunt for the events of its systems around its time', async () => {
    const [alertId] = await seedAlerts(h, 1);
    const alert = (await (await h.api('viewer', `/api/v1/alerts/${alertId}`)).json()) as { firstSeen: string; lastSeen: string; affectedSystems: string[] };
    const { context, page } = await h.signedIn('analyst');
    await page.goto(`${h.url}/alerts/${alertId}`);
    await Promise.all([page.waitForURL(/\/hunt/), page.locator('#alert-hunt').click()]);
    const url = new URL(page.url());
    assert.equal(url.searchParams.get('q'), alert.affectedSystems.slice(0, 5).map((k) => `entityKeys:"${k}"`).join(' or '));
    assert.equal(Date.parse(url.searchParams.get('since')!), Date.parse(alert.firstSeen) - HOUR);
    assert.equal(Date.parse(url.searchParams.get('until')!), Date.parse(alert.lastSeen) + HOUR);
    if (realLanguage) assert.ok((await shownIds(page)).length >= 1, 'the alert\'s evidence is among the events');
    await context.close();
  });

  it('links an entity of the graph to a hunt for it', async () => {
    const { context, page } = await h.signedIn('analyst');
    await page.goto(`${h.url}/graph?entity=${encodeURIComponent('host:web-1')}`);
    await Promise.all([page.waitForURL(/\/hunt/), page.locator('#entity-hunt').click()]);
    assert.equal(await page.locator('#hunt-q').inputValue(), 'entityKeys:"host:web-1"');
    assert.equal((await shownIds(page)).length, 12);
    await context.close();
  });
});
