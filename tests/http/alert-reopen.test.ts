import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestInstance, type TestInstance } from '../helpers/instance.js';
import { WEBSHELL_RULE, WEBSHELL_RULE_ID } from '../helpers/event-fixtures.js';

const http = (host: string, uri: string, sec: number) => ({ ts: 1_795_338_000 + sec, uid: `C${host}${sec}`, 'id.orig_h': '198.51.100.7', 'id.orig_p': 40000 + sec, 'id.resp_h': host, 'id.resp_p': 80, method: 'PUT', uri, host: 'web' });

async function scenario(t: TestInstance): Promise<{ a: string; b: string }> {
  assert.equal((await t.request('/api/v1/rules', { method: 'POST', token: t.tokens.rule_admin, body: WEBSHELL_RULE, headers: { 'content-type': 'application/yaml' } })).status, 201);
  const ingest = async (sec: number) => {
    const r = await t.request('/api/v1/ingest/network-monitor?logType=http', { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify([http('10.0.0.8', `/e${sec}.php`, sec)]) });
    assert.equal(r.status, 202, await r.clone().text());
    return (await r.json() as { alerts: Array<{ id: string; raised: boolean }> }).alerts;
  };
  const review = async (id: string, status: string) => assert.equal((await t.request(`/api/v1/alerts/${id}`, { method: 'PATCH', token: t.tokens.analyst, body: JSON.stringify({ status, reason: `set ${status}` }) })).status, 200);
  const a = (await ingest(10))[0]!.id;
  await review(a, 'dismissed');
  const b = (await ingest(20))[0]!.id;
  assert.notEqual(a, b);
  await review(a, 'open');        // analyst reopens A (allowed: any status may follow any other)
  await review(b, 'dismissed');   // B dismissed: A is the only non-dismissed alert of this rule and group
  return { a, b };
}

describe('reopening an alert while another of its rule and group holds it', () => {
  it('the next match joins the reopened (not dismissed) alert, the same live and after a restart', async () => {
    const live = await startTestInstance({}, { builtinRules: true });
    const restarted = await startTestInstance({}, { builtinRules: true });
    try {
      const l = await scenario(live);
      await scenario(restarted);
      await restarted.inst.runtime.checkpoint();
      await restarted.restart();
      const next = async (t: TestInstance) => {
        const res = await t.request('/api/v1/ingest/network-monitor?logType=http', { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify([http('10.0.0.8', '/e30.php', 30)]) });
        return (await res.json() as { alerts: Array<{ id: string; ruleId: string; raised: boolean }> }).alerts.filter((x) => x.ruleId === WEBSHELL_RULE_ID).map((x) => ({ id: x.id, raised: x.raised }));
      };
      const liveNext = await next(live);
      const restartedNext = await next(restarted);
      assert.deepEqual(liveNext, restartedNext, 'the same log gives the same alert after a restart');
      assert.deepEqual(liveNext, [{ id: l.a, raised: false }], 'a match joins the alert of its rule and group that is not dismissed (docs/detections.md#alerts)');
    } finally {
      await live.close();
      await restarted.close();
    }
  });
});
