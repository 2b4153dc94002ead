import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { makeEvent, startTestInstance, type TestInstance } from '../helpers/instance.js';
import { suppressionText } from '../../src/http/web/components/suppression.js';
import { signIn } from '../helpers/console-sign-in.js';

const RULE = 'aaaaaaaa-0000-4000-8000-0000000009a1';
const RULE_TEXT = `title: DNS evil
id: ${RULE}
logsource: {product: zeek, service: dns}
detection: {sel: {query: evil.example}, condition: sel}
`;

describe('PUT and DELETE /api/v1/rules/{id}/suppression', () => {
  let t: TestInstance;
  before(async () => {
    t = await startTestInstance();
    const r = await t.request('/api/v1/rules', { method: 'POST', token: t.tokens.rule_admin, body: RULE_TEXT, headers: { 'content-type': 'application/yaml' } });
    assert.equal(r.status, 201);
  });
  after(() => t.close());

  const put = (body: unknown, token = t.tokens.rule_admin, id = RULE) =>
    t.request(`/api/v1/rules/${id}/suppression`, { method: 'PUT', token, body: JSON.stringify(body) });
  const del = (body: unknown, token = t.tokens.rule_admin, id = RULE) =>
    t.request(`/api/v1/rules/${id}/suppression`, { method: 'DELETE', token, body: JSON.stringify(body) });
  const json = async (r: Response) => (await r.json()) as Record<string, unknown>;

  it('refuses bad input with 400 and the problem named', async () => {
    for (const [body, issue] of [
      [{ by: [], for: '1h', reason: 'r' }, /by/],
      [{ by: ['user'], for: '1 hour', reason: 'r' }, /suppress\.for/],
      [{ by: ['user'], for: '31d', reason: 'r' }, /suppress\.for/],
      [{ by: ['user', 'user'], for: '1h', reason: 'r' }, /named twice/],
      [{ by: ['user'], for: '1h', reason: '  ' }, /reason/],
      [{ by: ['user'], for: '1h' }, /reason/],
      [{ by: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'], for: '1h', reason: 'r' }, /by/],
      [{ by: ['user'], for: '1h', reason: 'r', extra: 1 }, /extra/],
    ] as const) {
      const r = await put(body);
      assert.equal(r.status, 400, JSON.stringify(body));
      const answer = await json(r);
      assert.match(JSON.stringify(answer['issues']), issue, JSON.stringify(body));
    }
    assert.equal((await del({})).status, 400);
  });

  it('answers 404 for an unknown rule, and for a clear with nothing set', async () => {
    assert.equal((await put({ by: ['user'], for: '1h', reason: 'r' }, t.tokens.rule_admin, 'no-such-rule')).status, 404);
    assert.equal((await del({ reason: 'r' }, t.tokens.rule_admin, 'no-such-rule')).status, 404);
    const none = await del({ reason: 'r' });
    assert.equal(none.status, 404);
    assert.match(String((await json(none))['error']), /no suppression set through the API/);
  });

  it('answers 403 without the rule admin\'s permission', async () => {
    assert.equal((await put({ by: ['user'], for: '1h', reason: 'r' }, t.tokens.analyst)).status, 403);
    assert.equal((await del({ reason: 'r' }, t.tokens.viewer)).status, 403);
  });

  it('sets the suppression, shows it on the rule, suppresses matches into one alert, and clears it', async () => {
    const set = await put({ by: ['user'], for: '1h', reason: 'scanner noise, CHG-123' });
    assert.equal(set.status, 200);
    const answer = await json(set);
    assert.deepEqual({ ...(answer['suppression'] as object), at: 'x' }, {
      source: 'api', by: ['user'], for: '1h', forMs: 3_600_000, reason: 'scanner noise, CHG-123', principal: 'rule_admin-user', at: 'x',
    });
    const detail = await json(await t.request(`/api/v1/rules/${RULE}`, { token: t.tokens.viewer }));
    assert.equal((detail['suppression'] as { source: string }).source, 'api');

    const lookup = (id: string, minute: number, ip: string) =>
      makeEvent({ id, time: `2026-11-22T10:${String(minute).padStart(2, '0')}:00Z`, entityKeys: [`ip:${ip}`], source: { adapter: 'network-monitor', instance: 'dns', recordId: id }, attributes: { query: 'evil.example', user: 'svc-scan' } });
    const ingest = await t.request('/api/v1/events', { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify([lookup('s1', 0, '10.0.0.1'), lookup('s2', 5, '10.0.0.2'), lookup('s3', 9, '10.0.0.3')]) });
    assert.equal(ingest.status, 202);
    const list = await json(await t.request(`/api/v1/alerts?rule=${RULE}`, { token: t.tokens.viewer }));
    const alerts = list['alerts'] as Array<Record<string, unknown>>;
    assert.equal(alerts.length, 1);
    const alert = await json(await t.request(`/api/v1/alerts/${String(alerts[0]!['id'])}`, { token: t.tokens.viewer }));
    assert.equal(alert['suppressedCount'], 2);
    assert.equal(alert['matchCount'], 3);
    assert.deepEqual(alert['suppression'], { by: ['user'], for: '1h', forMs: 3_600_000, values: { user: 'svc-scan' }, until: '2026-11-22T11:00:00.000Z' });

    const cleared = await del({ reason: 'ticket closed' });
    assert.equal(cleared.status, 200);
    assert.deepEqual(await json(cleared), { id: RULE, suppression: null });
    assert.equal((await json(await t.request(`/api/v1/rules/${RULE}`, { token: t.tokens.viewer })))['suppression'], null);
    // Both changes are in the audit trail, with the rule admin who made them.
    const audit = await json(await t.request('/api/v1/audit?limit=50', { token: t.tokens.admin }));
    const done = (audit['entries'] as Array<Record<string, unknown>>)
      .filter((e) => e['route'] === '/api/v1/rules/{id}/suppression' && e['status'] === 200)
      .map((e) => [e['method'], e['principal']]);
    assert.deepEqual(done, [['DELETE', 'rule_admin-user'], ['PUT', 'rule_admin-user']]);
  });

  it('is set and cleared from the rule page by a rule admin, who sees the form; a viewer does not', async () => {
    const { cookie } = await signIn(t, t.tokens.rule_admin);
    const page = async (c: string) => (await t.app.request(`http://localhost/rules/${RULE}`, { headers: { accept: 'text/html', cookie: c } })).text();
    const html = await page(cookie!);
    assert.match(html, /<h2>Suppression<\/h2>/);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(html)![1]!;
    const post = (fields: Record<string, string>) => {
      const body = new URLSearchParams({ _csrf: csrf, ...fields }).toString();
      return t.app.request(`http://localhost/rules/${RULE}/suppression`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html', cookie: cookie! }, body });
    };
    assert.equal((await post({ by: 'user, src_ip', for: '30m', reason: 'scanner window' })).status, 303);
    const set = await json(await t.request(`/api/v1/rules/${RULE}`, { token: t.tokens.viewer }));
    assert.deepEqual({ ...(set['suppression'] as object), at: 'x' }, { source: 'api', by: ['user', 'src_ip'], for: '30m', forMs: 1_800_000, reason: 'scanner window', principal: 'rule_admin-user', at: 'x' });
    assert.match(await page(cookie!), /by user, src_ip, for 30m, set by rule_admin-user/);
    assert.equal((await post({ by: 'user', for: 'soon', reason: 'r' })).status, 400, 'a bad window is refused');
    assert.equal((await post({ clear: 'true', reason: 'window over' })).status, 303);
    assert.equal((await json(await t.request(`/api/v1/rules/${RULE}`, { token: t.tokens.viewer })))['suppression'], null);
    const viewer = await signIn(t, t.tokens.viewer);
    assert.doesNotMatch(await page(viewer.cookie!), /<h2>Suppression<\/h2>/);
  });
});

describe('the alert page\'s suppression line', () => {
  it('says how many matches were suppressed, until when and by which values; nothing without a suppression', () => {
    const suppression = { by: ['user', 'src'], for: '1h', forMs: 3_600_000, values: { user: 'svc-scan', src: null }, until: '2026-11-22T11:00:00.000Z' };
    assert.equal(suppressionText({ suppression, suppressedCount: 3 }), '3 matches suppressed until 2026-11-22 11:00:00Z by user=svc-scan, src=(none)');
    assert.equal(suppressionText({ suppression, suppressedCount: 1 }), '1 match suppressed until 2026-11-22 11:00:00Z by user=svc-scan, src=(none)');
    assert.equal(suppressionText({}), undefined);
  });
});
