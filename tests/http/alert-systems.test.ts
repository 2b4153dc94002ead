import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestInstance, type TestInstance } from '../helpers/instance.js';
import { WEBSHELL_RULE } from '../helpers/event-fixtures.js';
import { signIn } from '../helpers/console-sign-in.js';

// One scanning address: every match groups by it (the first of its sorted systems), so one alert
// gathers each destination as an affected system. Two batches of 250 destinations: 501 systems.
const scan = (from: number, count: number) => Array.from({ length: count }, (_, k) => {
  const i = from + k;
  return { ts: 1_795_338_000 + i, uid: `Cscan${i}`, 'id.orig_h': '10.0.0.1', 'id.orig_p': 40000, 'id.resp_h': `192.168.${i >> 8}.${i & 255}`, 'id.resp_p': 80, method: 'PUT', uri: `/s${i}.php` };
});

type Summary = { id: string; affectedSystems: string[]; affectedSystemsCount: number; raised: boolean };

describe('an alert with thousands of affected systems', () => {
  let t: TestInstance;
  let answers: Array<{ alerts: Summary[] }>;
  before(async () => {
    t = await startTestInstance();
    t.setPeer('127.0.0.1');
    assert.equal((await t.request('/api/v1/rules', { method: 'POST', token: t.tokens.rule_admin, body: WEBSHELL_RULE, headers: { 'content-type': 'application/yaml' } })).status, 201);
    answers = [];
    for (const from of [0, 250]) {
      const res = await t.request('/api/v1/ingest/network-monitor?logType=http', { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify(scan(from, 250)), headers: { prefer: 'return=minimal' } });
      assert.equal(res.status, 202, await res.clone().text());
      answers.push((await res.json()) as { alerts: Summary[] });
    }
  });
  after(async () => { await t.close(); });

  const get = async <T>(path: string): Promise<T> => {
    const res = await t.request(path, { token: t.tokens.viewer });
    assert.equal(res.status, 200, await res.clone().text());
    return (await res.json()) as T;
  };

  it('names its first 20 systems in the ingestion result and the alert list, and counts them all', async () => {
    const [first, second] = answers.map((a) => a.alerts);
    assert.equal(first!.length, 1);
    assert.deepEqual([first![0]!.raised, first![0]!.affectedSystems.length, first![0]!.affectedSystemsCount], [true, 20, 251]);
    assert.deepEqual([second![0]!.id, second![0]!.raised, second![0]!.affectedSystems, second![0]!.affectedSystemsCount], [first![0]!.id, false, first![0]!.affectedSystems, 501]);
    const list = await get<{ alerts: Summary[] }>('/api/v1/alerts');
    assert.deepEqual(list.alerts.map((a) => [a.id, a.affectedSystems, a.affectedSystemsCount]), [[first![0]!.id, first![0]!.affectedSystems, 501]]);
  });

  it('shows the first 200 in its detail, and pages all of them, each once, in the order they came', async () => {
    const id = answers[0]!.alerts[0]!.id;
    const detail = await get<Summary>(`/api/v1/alerts/${id}`);
    assert.deepEqual([detail.affectedSystems.length, detail.affectedSystemsCount], [200, 501]);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { alertId: string; affectedSystemsComplete: boolean; affectedSystems: string[]; nextCursor: string | null } = await get(`/api/v1/alerts/${id}/systems?limit=150${cursor !== null ? `&cursor=${cursor}` : ''}`);
      assert.equal(page.alertId, id);
      assert.equal(page.affectedSystemsComplete, true);
      seen.push(...page.affectedSystems);
      cursor = page.nextCursor;
    } while (cursor !== null);
    assert.equal(seen.length, 501);
    assert.equal(new Set(seen).size, 501);
    assert.ok(seen.includes('ip:10.0.0.1') && seen.includes('ip:192.168.1.243'));
    assert.deepEqual(seen.slice(0, 200), detail.affectedSystems);
  });

  it('refuses a cursor that is not one of its systems, and an unknown alert', async () => {
    const id = answers[0]!.alerts[0]!.id;
    const foreign = Buffer.from(JSON.stringify('ip:203.0.113.9')).toString('base64url');
    for (const q of [`cursor=${foreign}`, 'cursor=not-a-cursor!', 'limit=1001', 'sort=severity']) {
      const res = await t.request(`/api/v1/alerts/${id}/systems?${q}`, { token: t.tokens.viewer });
      assert.equal(res.status, 400, q);
      assert.equal(typeof ((await res.json()) as { error: unknown }).error, 'string');
    }
    assert.equal((await t.request('/api/v1/alerts/alr_nope/systems', { token: t.tokens.viewer })).status, 404);
  });

  it('shows the first 200 on its console page, with a link to pages of all of them', async () => {
    const id = answers[0]!.alerts[0]!.id;
    const { cookie } = await signIn(t, t.tokens.viewer);
    const html = async (path: string) => {
      const res = await t.app.request(`http://localhost${path}`, { headers: { accept: 'text/html', cookie: cookie! } });
      assert.equal(res.status, 200, path);
      return res.text();
    };
    const links = (x: string) => x.match(/<li><a [^>]*href="\/graph\?entity=/g)?.length ?? 0;
    const page = await html(`/alerts/${id}`);
    assert.equal(links(page), 200);
    assert.ok(page.includes(`(the first 200 of 501; <a href="/alerts/${id}/systems">all of them</a>)`));
    let total = 0;
    let next: string | undefined = `/alerts/${id}/systems`;
    for (let pages = 0; next !== undefined && pages < 10; pages++) {
      const text = await html(next);
      total += links(text);
      next = /<a rel="next" href="([^"]+)"/.exec(text)?.[1];
    }
    assert.equal(total, 501);
    assert.match(await html(`/alerts/${id}/timeline`), /Not reviewed, assigned or annotated yet/);
  });
});

describe('an alert whose scan touched more systems than Vigil keeps on one alert', () => {
  let t: TestInstance;
  let answers: Array<{ alerts: Array<Summary & { affectedSystemsComplete: boolean }> }>;
  before(async () => {
    t = await startTestInstance();
    t.setPeer('127.0.0.1');
    assert.equal((await t.request('/api/v1/rules', { method: 'POST', token: t.tokens.rule_admin, body: WEBSHELL_RULE, headers: { 'content-type': 'application/yaml' } })).status, 201);
    answers = [];
    // The scanner and 10,049 destinations: 10,050 systems, past SYSTEMS_KEPT_PER_ALERT (10,000).
    for (let from = 0; from < 10_049; from += 1000) {
      const res = await t.request('/api/v1/ingest/network-monitor?logType=http', { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify(scan(from, Math.min(1000, 10_049 - from))), headers: { prefer: 'return=minimal' } });
      assert.equal(res.status, 202, await res.clone().text());
      answers.push((await res.json()) as (typeof answers)[number]);
    }
  });
  after(async () => { await t.close(); });

  it('keeps the first 10,000, and every answer says from which batch on it did not keep them all', async () => {
    const lines = answers.map((a) => a.alerts[0]!);
    assert.deepEqual(lines.map((l) => [l.affectedSystemsCount, l.affectedSystemsComplete]), [
      [1001, true], [2001, true], [3001, true], [4001, true], [5001, true], [6001, true], [7001, true], [8001, true], [9001, true], [10_000, false], [10_000, false],
    ]);
    const id = lines[0]!.id;
    const res = await t.request(`/api/v1/alerts/${id}`, { token: t.tokens.viewer });
    const detail = (await res.json()) as Summary & { affectedSystemsComplete: boolean; evidenceCount: number };
    assert.deepEqual([detail.affectedSystemsCount, detail.affectedSystemsComplete, detail.evidenceCount], [10_000, false, 10_049]);
    const list = (await (await t.request('/api/v1/alerts', { token: t.tokens.viewer })).json()) as { alerts: Array<{ affectedSystemsComplete: boolean }> };
    assert.deepEqual(list.alerts.map((a) => a.affectedSystemsComplete), [false]);
    const first = (await (await t.request(`/api/v1/alerts/${id}/systems?limit=1`, { token: t.tokens.viewer })).json()) as { affectedSystemsComplete: boolean; affectedSystems: string[] };
    assert.deepEqual([first.affectedSystemsComplete, first.affectedSystems], [false, ['ip:10.0.0.1']]);
    const { cookie } = await signIn(t, t.tokens.viewer);
    const page = await (await t.app.request(`http://localhost/alerts/${id}`, { headers: { accept: 'text/html', cookie: cookie! } })).text();
    assert.ok(page.includes('More systems were seen than Vigil keeps on one alert (10,000 kept); the evidence names them all.'));
  });
});
