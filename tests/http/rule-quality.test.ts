import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestInstance, type TestInstance } from '../helpers/instance.js';
import { WEBSHELL_RULE, WEBSHELL_RULE_ID } from '../helpers/event-fixtures.js';

type Quality = {
  alertsRaised: number; alertsReviewed: number; matchesExcepted: number; medianTimeToFirstReviewSeconds: number | null;
  dispositions: Record<string, number>; shares: Record<string, number | null>;
};
type Row = { ruleId: string; title: string; installed: boolean; quality: Quality };

const http = (host: string, sec: number) => ({ ts: 1_795_338_000 + sec, uid: `C${host}${sec}`, 'id.orig_h': '198.51.100.7', 'id.orig_p': 40000 + sec, 'id.resp_h': host, 'id.resp_p': 80, method: 'PUT', uri: '/up/shell.php', host: 'web' });

const QUIET_RULE = `title: Quiet rule
id: 22222222-2222-4333-8444-555555555555
logsource: {product: zeek, service: dns}
detection: {sel: {query: never.example}, condition: sel}
level: low
`;

describe('rule quality routes: the rule detail and GET /api/v1/rules/quality', () => {
  let t: TestInstance;
  const alertIds: string[] = [];
  before(async () => {
    t = await startTestInstance();
    for (const rule of [WEBSHELL_RULE, QUIET_RULE]) {
      const res = await t.request('/api/v1/rules', { method: 'POST', token: t.tokens.rule_admin, body: rule, headers: { 'content-type': 'application/yaml' } });
      assert.equal(res.status, 201, await res.text());
    }
    t.setNow('2026-11-22T10:00:00.000Z');
    const res = await t.request('/api/v1/ingest/network-monitor?logType=http', {
      method: 'POST', token: t.tokens.ingestor, body: JSON.stringify([http('10.0.0.1', 1), http('10.0.0.2', 2), http('10.0.0.3', 3)]),
    });
    assert.equal(res.status, 202, await res.clone().text());
    const body = await res.json() as { alerts: Array<{ id: string; ruleId: string; raised: boolean }> };
    alertIds.push(...body.alerts.filter((a) => a.raised && a.ruleId === WEBSHELL_RULE_ID).map((a) => a.id));
    assert.equal(alertIds.length, 3);
    // One alert reviewed two minutes after it was raised, as a true positive; the other two in bulk after ten minutes.
    t.setNow('2026-11-22T10:02:00.000Z');
    const one = await t.request(`/api/v1/alerts/${alertIds[0]}`, { method: 'PATCH', token: t.tokens.analyst, body: JSON.stringify({ status: 'dismissed', disposition: 'true_positive', reason: 'real upload, contained' }) });
    assert.equal(one.status, 200, await one.text());
    t.setNow('2026-11-22T10:10:00.000Z');
    const many = await t.request('/api/v1/alerts/reviews', { method: 'POST', token: t.tokens.analyst, body: JSON.stringify({ alertIds: alertIds.slice(1), status: 'dismissed', disposition: 'false_positive', reason: 'the deploy job' }) });
    assert.equal(many.status, 200, await many.text());
    // Two matches an exception kept from alerting, as the detection step records them.
    const match = (eventIds: string[]) => ({ exceptionId: 'exc_deploy', ruleId: WEBSHELL_RULE_ID, eventIds, time: '2026-11-22T10:11:00.000Z' });
    await t.inst.pipeline.record([{ type: 'MatchesExcepted', data: { matches: [match(['e1', 'e2']), match(['e3'])] } }], { now: '2026-11-22T10:11:00.000Z' });
  });
  after(async () => { await t.close(); });

  const get = async <T>(path: string, token = t.tokens.viewer) => { const r = await t.request(path, { token }); return { status: r.status, body: await r.json() as T }; };

  const EXPECTED: Quality = {
    alertsRaised: 3,
    alertsReviewed: 3,
    dispositions: { true_positive: 1, benign: 0, false_positive: 2 },
    shares: { true_positive: 1 / 3, benign: 0, false_positive: 2 / 3 },
    // 120 s, 600 s and 600 s.
    medianTimeToFirstReviewSeconds: 600,
    matchesExcepted: 2,
  };

  it('answers the quality of a rule on its detail', async () => {
    const { status, body } = await get<{ id: string; quality: Quality }>(`/api/v1/rules/${WEBSHELL_RULE_ID}`);
    assert.equal(status, 200);
    assert.deepEqual(body.quality, EXPECTED);
    const quiet = await get<{ quality: Quality }>('/api/v1/rules/22222222-2222-4333-8444-555555555555');
    assert.deepEqual(quiet.body.quality, {
      alertsRaised: 0, alertsReviewed: 0, dispositions: { true_positive: 0, benign: 0, false_positive: 0 },
      shares: { true_positive: null, benign: null, false_positive: null }, medianTimeToFirstReviewSeconds: null, matchesExcepted: 0,
    });
  });

  it('lists rules noisiest first, a page at a time, and is not read as a rule id', async () => {
    const { status, body } = await get<{ rules: Row[]; nextCursor: string | null }>('/api/v1/rules/quality');
    assert.equal(status, 200);
    assert.deepEqual(body.rules[0], { ruleId: WEBSHELL_RULE_ID, title: 'Webshell upload', installed: true, quality: EXPECTED });
    assert.ok(body.rules.some((r) => r.ruleId === '22222222-2222-4333-8444-555555555555' && r.quality.alertsRaised === 0));
    assert.equal(body.nextCursor, null);
    const first = await get<{ rules: Row[]; nextCursor: string }>('/api/v1/rules/quality?limit=1&sort=alerts');
    assert.deepEqual([first.body.rules.map((r) => r.ruleId), typeof first.body.nextCursor], [[WEBSHELL_RULE_ID], 'string']);
    const second = await get<{ rules: Row[] }>(`/api/v1/rules/quality?limit=1&sort=alerts&cursor=${first.body.nextCursor}`);
    assert.equal(second.status, 200);
    assert.notEqual(second.body.rules[0]!.ruleId, WEBSHELL_RULE_ID);
    const byShare = await get<{ rules: Row[] }>('/api/v1/rules/quality?sort=false_positive_share');
    assert.equal(byShare.body.rules[0]!.ruleId, WEBSHELL_RULE_ID);
  });

  it('refuses an unknown order, a cursor of another order and an unknown parameter with an ErrorResponse', async () => {
    const first = await get<{ nextCursor: string }>('/api/v1/rules/quality?limit=1&sort=alerts');
    for (const query of ['sort=loudest', `sort=noisiest&cursor=${first.body.nextCursor}`, 'limit=0', 'rule=x', 'cursor=%21']) {
      const { status, body } = await get<{ error: string; issues?: string[] }>(`/api/v1/rules/quality?${query}`);
      assert.equal(status, 400, query);
      assert.equal(typeof body.error, 'string');
    }
  });

  it('answers the same after a restart, from the checkpoint and the log', async () => {
    const before = await get<{ rules: Row[] }>('/api/v1/rules/quality');
    await t.restart();
    const after = await get<{ rules: Row[] }>('/api/v1/rules/quality');
    assert.deepEqual(after.body, before.body);
  });
});
