import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { eventOf } from '../../src/events/union.js';
import { startTestInstance, type TestInstance } from '../helpers/instance.js';
import { WEBSHELL_RULE, WEBSHELL_RULE_ID } from '../helpers/event-fixtures.js';

/** An alert of `rule` on `host`, raised `min` minutes after 10:00. */
function raised(id: string, rule: string, title: string, host: string, min: number, level: 'high' | 'low' = 'high') {
  const at = `2026-11-22T10:${String(min).padStart(2, '0')}:00.000Z`;
  return eventOf('AlertRaised', {
    alertId: id, ruleId: rule, groupKey: `evt-${id}`, title, level, severity: level === 'high' ? 8 : 3, confidence: 0.7,
    matchReason: { selections: ['sel'], fields: [], keywords: [] }, evidence: [{ eventId: `evt-${id}`, time: at, summary: 'x' }],
    affectedSystems: [`host:${host}`, 'ip:203.0.113.66'], firstSeen: at, lastSeen: at, tags: [],
  });
}

describe('the console at volume: grouped queue, facets, rule filter by name, events and rules pages', () => {
  let t: TestInstance;
  before(async () => {
    t = await startTestInstance();
    const res = await t.request('/api/v1/rules', { method: 'POST', token: t.tokens.rule_admin, body: WEBSHELL_RULE, headers: { 'content-type': 'application/yaml' } });
    assert.equal(res.status, 201);
    // One attacker (203.0.113.66) on 50 hosts: 50 alerts of one rule; and 3 of a Vigil rule on one host.
    const events = [
      ...Array.from({ length: 50 }, (_, i) => raised(`alr_web${String(i).padStart(2, '0')}`, WEBSHELL_RULE_ID, 'Webshell upload', `web-${i}`, i)),
      ...[0, 1, 2].map((i) => raised(`alr_disk${i}`, 'vigil.disk-low', 'Store disk low', 'store', i, 'low')),
    ];
    await t.inst.writer.record(events, { now: '2026-11-22T11:00:00.000Z' });
  });
  after(async () => { await t.close(); });

  const page = async (path: string, token = t.tokens.analyst) => {
    const res = await t.request(path, { token, headers: { accept: 'text/html' } });
    return { status: res.status, html: await res.text() };
  };
  const api = async (path: string) => { const r = await t.request(path, { token: t.tokens.analyst }); return { status: r.status, body: await r.json() as Record<string, unknown> }; };

  it('shows 50 hosts hit by one attacker as one group of 50, not 50 rows, with its systems and worst severity', async () => {
    const { status, html } = await page('/alerts');
    assert.equal(status, 200);
    const groups = [...html.matchAll(/<details class="group" data-rule="([^"]+)"/g)].map((m) => m[1]);
    assert.deepEqual(groups, [WEBSHELL_RULE_ID, 'vigil.disk-low'], 'one group per rule, the worst severity first');
    assert.match(html, /<b>Webshell upload<\/b> <span class="count">50 alerts<\/span>/);
    assert.match(html, /51 systems · 50 group keys · 50 not dismissed/, '50 hosts and the attacker address');
    assert.match(html, /53 matching/);
    assert.equal((html.match(/<tr data-key="alr_web/g) ?? []).length, 10, 'a group expands to its newest 10 alerts');
    assert.match(html, /All 50 alerts of this rule/);
  });

  it('counts the facets over the current filter', async () => {
    const { html } = await page('/alerts');
    const facet = (name: string) => {
      const section = new RegExp(`data-facet="${name}">([\\s\\S]*?)</section>`).exec(html)![1]!;
      return Object.fromEntries([...section.matchAll(/data-value="([^"]*)"[^>]*>[^<]*<\/a> <span class="count">(\d+)<\/span>/g)].map((m) => [m[1], Number(m[2])]));
    };
    assert.deepEqual(facet('rule'), { [WEBSHELL_RULE_ID]: 50, 'vigil.disk-low': 3 });
    assert.deepEqual(facet('severity'), { high: 50, low: 3 });
    assert.deepEqual(facet('status'), { open: 53 });
    assert.deepEqual(facet('assignee'), { '': 53 });
    assert.deepEqual(facet('source'), { 'zeek/http': 50, vigil: 3 });
    const narrowed = await page('/alerts?source=vigil');
    assert.match(narrowed.html, /3 matching/, 'the source facet filters');
    assert.match(narrowed.html, /data-facet="source">[\s\S]*?aria-current="true" data-value="vigil"/, 'and marks what it filters by');
  });

  it('filters by rule title or name in the API, and says so when no rule has that name', async () => {
    const byId = await api(`/api/v1/alerts?rule=${WEBSHELL_RULE_ID}&limit=100`);
    const byTitle = await api('/api/v1/alerts?rule=webshell%20UPLOAD&limit=100');
    assert.equal((byTitle.body['alerts'] as unknown[]).length, 50, 'a title matches, case aside');
    assert.deepEqual(byTitle.body, byId.body);
    const system = await api('/api/v1/alerts?rule=Store%20disk%20low');
    assert.equal((system.body['alerts'] as unknown[]).length, 3, "a Vigil rule's title, from its alerts");
    const unknown = await api('/api/v1/alerts?rule=No%20such%20rule');
    assert.equal(unknown.status, 400);
    assert.equal(unknown.body['error'], 'unknown rule');
    assert.match(String((unknown.body['issues'] as string[])[0]), /rule: no rule has the id, title or name "No such rule"/);
  });

  it('filters the console queue by a rule title, as the flat list of that rule, and names an unknown one', async () => {
    const { html } = await page('/alerts?rule=Webshell+upload');
    assert.match(html, /50 matching/);
    assert.match(html, /<table class="data" id="queue"/, 'one rule: the flat list');
    const none = await page('/alerts?rule=nothing-like-it');
    assert.equal(none.status, 200);
    assert.match(none.html, /No rule has the id, title or name “nothing-like-it”/);
    assert.match(none.html, /0 matching/);
    const flat = await page('/alerts?view=flat');
    assert.equal((flat.html.match(/<tr data-key="alr_/g) ?? []).length, 50, 'the flat toggle: one row per alert, a page of 50');
  });

  it("names the alert's rule by title with a link, and links its other alerts", async () => {
    const { html } = await page('/alerts/alr_web07');
    assert.match(html, new RegExp(`<a href="/rules/${WEBSHELL_RULE_ID}">Webshell upload</a>`));
    assert.match(html, new RegExp(`<a href="/alerts\\?rule=${WEBSHELL_RULE_ID}" id="rule-alerts">49 other alerts of this rule</a>`));
    assert.match(html, /class="ekey"[^>]*><span>host:<\/span><wbr\/><span>web-7<\/span>/, 'an entity key breaks only after its separator');
  });

  it("collapses an incident's 51 'alert joined' entries into one, and reviews all of its alerts with one bulk review", async () => {
    const ids = [...Array.from({ length: 50 }, (_, i) => `alr_web${String(i).padStart(2, '0')}`), 'alr_disk0'];
    const promoted = await t.request('/api/v1/incidents', { method: 'POST', token: t.tokens.analyst, body: JSON.stringify({ alertIds: ids, title: 'One attacker', reason: 'same address' }) });
    assert.equal(promoted.status, 201, await promoted.clone().text());
    const id = ((await promoted.json()) as { id: string }).id;
    const { html } = await page(`/incidents/${id}`);
    assert.match(html, /51 alerts joined/);
    assert.equal((html.match(/<details class="joined">/g) ?? []).length, 1, 'one expandable entry, not 51 lines');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(html)![1]!;
    const form = (fields: Array<[string, string]>) => t.request(`/incidents/${id}/review`, { method: 'POST', token: t.tokens.analyst, body: new URLSearchParams([...fields, ['_csrf', csrf]]).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.equal((await form([['scope', 'selected'], ['ids', 'alr_web00'], ['ids', 'alr_not_in_it'], ['status', 'dismissed'], ['reason', 'x']])).status, 400, 'only its own alerts');
    const res = await form([['scope', 'all'], ['status', 'in_review'], ['disposition', 'true_positive'], ['reason', 'one attacker, all hosts']]);
    assert.equal(res.status, 303);
    assert.match(res.headers.get('location') ?? '', /notice=51\+alerts\+set\+to\+in\+review/);
    const a = (await (await t.request('/api/v1/alerts/alr_disk0', { token: t.tokens.viewer })).json()) as { status: string; disposition: string; reviewHistory: Array<{ bulk?: boolean; reason: string }> };
    assert.deepEqual([a.status, a.disposition, a.reviewHistory.at(-1)!.bulk, a.reviewHistory.at(-1)!.reason], ['in_review', 'true_positive', true, 'one attacker, all hosts']);
  });

  it('searches and pages the rules list', async () => {
    for (let n = 0; n < 3; n++) {
      const yaml = Array.from({ length: 40 }, (_, i) => `title: Bulk rule ${n * 40 + i}\nid: bulk-${n * 40 + i}\nlogsource: {product: zeek, service: dns}\ndetection:\n  sel: {query: q${i}.example}\n  condition: sel\nlevel: low\ntags: [attack.t${1000 + ((n * 40 + i) % 7)}]\n`).join('---\n');
      const r = await t.request('/api/v1/rules', { method: 'POST', token: t.tokens.rule_admin, body: yaml, headers: { 'content-type': 'application/yaml' } });
      assert.equal(r.status, 201, await r.clone().text());
    }
    const first = await page('/rules');
    assert.equal((first.html.match(/<tr data-key=/g) ?? []).length, 50, 'a page of 50 of 121');
    assert.match(first.html, /121 rules; 1–50 shown/);
    const last = await page('/rules?offset=100');
    assert.equal((last.html.match(/<tr data-key=/g) ?? []).length, 21);
    assert.match(last.html, /Previous page/);
    const tag = await page('/rules?q=attack.t1003');
    assert.match(tag.html, /17 of 121 rules match/, 'by tag');
    const title = await page('/rules?q=webshell');
    assert.match(title.html, /1 of 121 rules match/);
    assert.match(title.html, /Webshell upload/);
    assert.equal((await page('/rules?offset=x')).status, 400);
  });

  it("hides Vigil's own api_access records from the events page by default, and shows them on request", async () => {
    const ev = { schemaVersion: 1, id: 'ev-login-1', category: 'identity', class: 'authentication', activity: 'logon', outcome: 'failure', time: '2026-11-22T10:00:00.000Z', ingestedAt: '2026-11-22T10:00:00.000Z', source: { adapter: 'linux-journal', instance: 'h', recordId: 'r1' }, entityKeys: ['user:svc-scanner@corp'], actor: { user: 'svc-scanner' }, attributes: {} };
    assert.equal((await t.request('/api/v1/events', { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify([ev]) })).status, 202);
    const hidden = await page('/events');
    assert.match(hidden.html, /authentication/);
    assert.doesNotMatch(hidden.html, /api_access/, "the requests above recorded api_access events; none is shown");
    assert.match(hidden.html, /href="\/events\?own=show">Show them/);
    const shown = await page('/events?own=show');
    assert.match(shown.html, /identity\/api_access\//);
    assert.match(shown.html, /Hide them/);
    const asked = await page('/events?class=api_access');
    assert.match(asked.html, /identity\/api_access\//, 'a search for the class shows them');
    assert.match(hidden.html, /<span>user:<\/span><wbr\/><span>svc-scanner@<\/span><wbr\/><span>corp<\/span>/);
  });
});
