import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestInstance, type TestInstance } from '../helpers/instance.js';
import { WEBSHELL_RULE } from '../helpers/event-fixtures.js';
import { signIn } from '../helpers/console-sign-in.js';

// An incident bigger than its detail shows: 250 alerts on 250 hosts, promoted into one incident
// (251 timeline entries: opened, then one per alert joined).
const ALERTS = 250;
const http = (i: number) => ({
  ts: 1_795_338_000 + i, uid: `Cpage${i}`, 'id.orig_h': `10.1.${i >> 8}.${i & 255}`, 'id.orig_p': 40000 + i,
  'id.resp_h': `10.2.${i >> 8}.${i & 255}`, 'id.resp_p': 80, method: 'PUT', uri: `/s${i}.php`, host: 'web',
});

type Line = { id: string; lastSeen: string; affectedSystems: string[] };
type Totals = { alerts: number; entities: number; mergedFrom: number; timeline: number };
type Incident = { id: string; alertIds: string[]; alerts: Line[]; entities: string[]; timeline: Array<{ kind?: string; seq?: number }>; totals: Totals };

describe('a large incident: bounded detail and list, whole lists a page at a time', () => {
  let t: TestInstance;
  let alertIds: string[];
  let created: Incident;
  before(async () => {
    t = await startTestInstance();
    t.setPeer('127.0.0.1');
    assert.equal((await t.request('/api/v1/rules', { method: 'POST', token: t.tokens.rule_admin, body: WEBSHELL_RULE, headers: { 'content-type': 'application/yaml' } })).status, 201);
    const res = await t.request('/api/v1/ingest/network-monitor?logType=http', { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify(Array.from({ length: ALERTS }, (_, i) => http(i))) });
    assert.equal(res.status, 202, await res.clone().text());
    alertIds = ((await res.json()) as { alerts: Array<{ id: string }> }).alerts.map((a) => a.id);
    assert.equal(new Set(alertIds).size, ALERTS);
    const promoted = await t.request('/api/v1/incidents', { method: 'POST', token: t.tokens.analyst, body: JSON.stringify({ alertIds, title: 'Mass upload', reason: 'one campaign' }) });
    assert.equal(promoted.status, 201, await promoted.clone().text());
    created = (await promoted.json()) as Incident;
  });
  after(async () => { await t.close(); });

  const get = async <T>(path: string, token = t.tokens.viewer): Promise<T> => {
    const res = await t.request(path, { token });
    assert.equal(res.status, 200, await res.clone().text());
    return (await res.json()) as T;
  };
  /** Every page of one of the incident's lists, following nextCursor. */
  async function walk<T>(part: string, field: string, limit: number): Promise<T[]> {
    const seen: T[] = [];
    let cursor: string | null = null;
    for (let pages = 0; pages < 100; pages++) {
      const page: Record<string, unknown> = await get(`/api/v1/incidents/${created.id}/${part}?limit=${limit}${cursor !== null ? `&cursor=${cursor}` : ''}`);
      assert.equal(page['incidentId'], created.id);
      const items = page[field] as T[];
      assert.ok(items.length <= limit);
      seen.push(...items);
      cursor = page['nextCursor'] as string | null;
      if (cursor === null) return seen;
      assert.equal(items.length, limit, 'only the last page is short');
    }
    throw new Error('more than 100 pages');
  }

  it('answers the promotion, the detail and the list with 200 of each list and the totals', async () => {
    const detail = await get<Incident>(`/api/v1/incidents/${created.id}`);
    const [listed] = (await get<Array<Incident & { timeline?: unknown }>>('/api/v1/incidents')).filter((i) => i.id === created.id);
    for (const i of [created, detail]) {
      assert.deepEqual([i.alerts.length, i.alertIds.length, i.entities.length, i.timeline.length], [200, 200, 200, 200]);
      assert.deepEqual(i.alertIds, i.alerts.map((a) => a.id), 'alertIds are the lines shown');
      assert.deepEqual(i.totals, { alerts: ALERTS, entities: detail.totals.entities, mergedFrom: 0, timeline: ALERTS + 1 });
      assert.equal(i.timeline[0]!.kind, 'alert_joined', 'the newest entries: the opening is older than 200 entries');
    }
    assert.ok(detail.totals.entities >= ALERTS, `${detail.totals.entities} entities`);
    assert.deepEqual([listed!.alertIds.length, listed!.entities.length, listed!.totals, listed!.timeline], [200, 200, detail.totals, undefined]);
  });

  it('pages the whole of its alerts, most recently seen first, each once', async () => {
    const lines = await walk<Line>('alerts', 'alerts', 60);
    assert.deepEqual(lines.map((a) => a.id).sort(), [...alertIds].sort());
    for (let i = 1; i < lines.length; i++) assert.ok(lines[i - 1]!.lastSeen >= lines[i]!.lastSeen, 'most recently seen first');
    const detail = await get<Incident>(`/api/v1/incidents/${created.id}`);
    assert.deepEqual(detail.alerts.map((a) => a.id), lines.slice(0, 200).map((a) => a.id), 'the detail shows the first page of 200');
    const filtered = await get<{ alerts: Line[] }>(`/api/v1/alerts?incident=${created.id}&limit=1000`, t.tokens.analyst);
    assert.deepEqual(filtered.alerts.map((a) => a.id), lines.map((a) => a.id), 'GET /api/v1/alerts?incident= lists the same alerts in the same order');
  });

  it('pages the whole of its entities in the order they joined, and the whole timeline oldest first', async () => {
    const detail = await get<Incident>(`/api/v1/incidents/${created.id}`);
    const entities = await walk<string>('entities', 'entities', 70);
    assert.equal(entities.length, detail.totals.entities);
    assert.equal(new Set(entities).size, entities.length);
    assert.deepEqual(entities.slice(0, 200), detail.entities);
    const lineSystems = new Set((await walk<Line>('alerts', 'alerts', 1000)).flatMap((a) => a.affectedSystems));
    assert.deepEqual(new Set(entities), lineSystems, 'its entities are its alerts\' systems');
    const timeline = await walk<{ kind?: string; seq?: number }>('timeline', 'entries', 64);
    assert.equal(timeline.length, ALERTS + 1);
    assert.equal(timeline[0]!.kind, 'opened');
    assert.deepEqual(timeline.slice(-200), detail.timeline, 'the detail shows the newest 200 entries');
  });

  it('shows the console page with 200 of each list, says how many there are, and links pages with all of them', async () => {
    const { cookie } = await signIn(t, t.tokens.viewer);
    const html = async (path: string, status = 200) => {
      const res = await t.app.request(`http://localhost${path}`, { headers: { accept: 'text/html', cookie: cookie! } });
      assert.equal(res.status, status, path);
      return res.text();
    };
    const base = `/incidents/${created.id}`;
    const page = await html(base);
    assert.equal(page.match(/<tr[ >]/g)!.length - 1, 200, 'one header row and 200 alert rows');
    assert.ok(page.includes(`<h2>Alerts (250)<span class="muted"> (the most recently seen 200 of 250; <a href="${base}/alerts">all of them</a>)`));
    assert.ok(page.includes(`(the newest 200 of 251; <a href="${base}/timeline">all of them</a>)`));
    assert.match(page, new RegExp(`\\(the first 200 of \\d+; <a href="${base}/entities">all of them</a>\\)`));
    assert.match(await html('/incidents'), /250\/250 open/);
    // Each list, whole, 200 a page: follow the "Next" links.
    const walk = async (path: string, count: (text: string) => number) => {
      let total = 0;
      let next: string | undefined = path;
      for (let pages = 0; next !== undefined && pages < 10; pages++) {
        const text = await html(next);
        total += count(text);
        next = /<a rel="next" href="([^"]+)"/.exec(text)?.[1]?.replace(/&amp;/g, '&');
      }
      return total;
    };
    assert.equal(await walk(`${base}/alerts`, (x) => x.match(/<tr[ >]/g)!.length - 1), ALERTS);
    // A run of "alert joined" entries is one expandable entry (issue 59): its alerts are counted inside it.
    const entries = (x: string) => {
      const runs = [...x.matchAll(/<details class="joined">([\s\S]*?)<\/details>/g)];
      const titles = x.match(/<div class="tl-title">/g)?.length ?? 0;
      return titles - runs.length + runs.reduce((n, r) => n + (r[1]!.match(/<li>/g)?.length ?? 0), 0);
    };
    assert.equal(await walk(`${base}/timeline`, entries), ALERTS + 1);
    const entities = (await get<Incident>(base.replace('/incidents', '/api/v1/incidents'))).totals.entities;
    assert.equal(await walk(`${base}/entities`, (x) => x.match(/href="\/graph\?entity=/g)?.length ?? 0), entities);
    await html(`${base}/entities?cursor=not-a-cursor!`, 400);
    await html('/incidents/inc_nope/timeline', 404);
  });

  it('refuses a cursor that is not this list\'s, an unknown incident, and parameters it does not take', async () => {
    const entitiesPage = await get<{ nextCursor: string }>(`/api/v1/incidents/${created.id}/entities?limit=5`);
    for (const path of [
      `/api/v1/incidents/${created.id}/timeline?cursor=${entitiesPage.nextCursor}`,
      `/api/v1/incidents/${created.id}/alerts?cursor=${entitiesPage.nextCursor}`,
      `/api/v1/incidents/${created.id}/entities?cursor=not-a-cursor!`,
      `/api/v1/incidents/${created.id}/entities?limit=0`,
      `/api/v1/incidents/${created.id}/alerts?status=open`,
    ]) {
      const res = await t.request(path, { token: t.tokens.viewer });
      assert.equal(res.status, 400, path);
      const body = (await res.json()) as { error: string; issues?: string[] };
      assert.equal(typeof body.error, 'string');
    }
    for (const part of ['alerts', 'entities', 'timeline']) {
      const res = await t.request(`/api/v1/incidents/inc_nope/${part}`, { token: t.tokens.viewer });
      assert.equal(res.status, 404, part);
    }
  });

  it('answers a merge of it with the first 200 alerts moved and how many moved', async () => {
    const res = await t.request('/api/v1/ingest/network-monitor?logType=http', { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify([http(ALERTS + 7)]) });
    const lone = ((await res.json()) as { alerts: Array<{ id: string }> }).alerts[0]!.id;
    const target = (await (await t.request('/api/v1/incidents', { method: 'POST', token: t.tokens.analyst, body: JSON.stringify({ alertIds: [lone], title: 'Target', reason: 'r' }) })).json()) as Incident;
    const merged = await t.request(`/api/v1/incidents/${created.id}/merge`, { method: 'POST', token: t.tokens.analyst, body: JSON.stringify({ into: target.id, reason: 'one campaign' }) });
    assert.equal(merged.status, 200, await merged.clone().text());
    const body = (await merged.json()) as { id: string; mergedInto: string; alertIds: string[]; alertCount: number };
    assert.deepEqual([body.id, body.mergedInto, body.alertIds.length, body.alertCount], [created.id, target.id, 200, ALERTS]);
    assert.equal((await get<Incident>(`/api/v1/incidents/${target.id}`)).totals.alerts, ALERTS + 1);
  });
});
