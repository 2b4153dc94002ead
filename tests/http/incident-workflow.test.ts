import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestInstance, type TestInstance } from '../helpers/instance.js';
import { WEBSHELL_RULE } from '../helpers/event-fixtures.js';

const http = (host: string, uri: string, sec: number) => ({ ts: 1_795_338_000 + sec, uid: `C${host}${sec}`, 'id.orig_h': '198.51.100.7', 'id.orig_p': 40000 + sec, 'id.resp_h': host, 'id.resp_p': 80, method: 'PUT', uri, host: 'web' });

type TimelineEntry = { kind?: string; what: string; principal?: string; authentication?: string; from?: string; to?: string; reason?: string; alertId?: string };
type Incident = { id: string; origin: string; status: string; assignee?: string; mergedInto?: string; mergedFrom: string[]; alertIds: string[]; alerts: Array<{ id: string }>; timeline: TimelineEntry[] };

describe('the incident workflow over HTTP', () => {
  let t: TestInstance;
  let correlatedId: string;
  let inCorrelated: string[];
  let lone: string;
  /** An alert of the correlated incident other than `lone`. */
  let moved: string;
  before(async () => {
    t = await startTestInstance({}, { builtinRules: true });
    t.setPeer('127.0.0.1');
    assert.equal((await t.request('/api/v1/rules', { method: 'POST', token: t.tokens.rule_admin, body: WEBSHELL_RULE, headers: { 'content-type': 'application/yaml' } })).status, 201);
    const ingest = (logType: string, records: unknown[]) => t.request(`/api/v1/ingest/network-monitor?logType=${logType}`, { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify(records) });
    assert.equal((await ingest('http', [http('10.0.0.8', '/e.php', 10)])).status, 202);
    assert.equal((await ingest('notice', [{ ts: 1_795_338_020, uid: 'Cn1', 'id.orig_h': '10.0.0.8', 'id.orig_p': 1, 'id.resp_h': '10.0.0.9', 'id.resp_p': 22, note: 'Scan::Port_Scan', msg: 'scan' }])).status, 202);
    assert.equal((await ingest('http', [http('10.0.0.20', '/x.php', 30)])).status, 202);
    const incidents = await (await t.request('/api/v1/incidents', { token: t.tokens.viewer })).json() as Incident[];
    assert.equal(incidents.length, 1);
    correlatedId = incidents[0]!.id;
    inCorrelated = incidents[0]!.alertIds;
    assert.ok(inCorrelated.length >= 2);
    const alerts = await (await t.request('/api/v1/alerts?entity=ip:10.0.0.20', { token: t.tokens.viewer })).json() as { alerts: Array<{ id: string }> };
    lone = alerts.alerts[0]!.id;
    moved = inCorrelated.find((id) => id !== lone)!;
  });
  after(async () => { await t.close(); });

  const send = (method: string, path: string, body: unknown, token = t.tokens.analyst) => t.request(path, { method, token, body: JSON.stringify(body) });
  const incident = async (id: string) => (await (await t.request(`/api/v1/incidents/${id}`, { token: t.tokens.viewer })).json()) as Incident;
  let promotedId: string;

  it('promotes an alert of a correlated incident with another alert: 201 with origin, status and timeline; the alert moves, no two incidents hold it', async () => {
    const res = await send('POST', '/api/v1/incidents', { alertIds: [moved, lone], title: 'Webshell campaign', reason: 'same actor' });
    assert.equal(res.status, 201, await res.clone().text());
    const body = await res.json() as Incident;
    promotedId = body.id;
    assert.equal(body.origin, 'promoted');
    assert.equal(body.status, 'open');
    assert.deepEqual(body.alerts.map((a) => a.id).sort(), [moved, lone].sort());
    assert.deepEqual([body.timeline[0]!.kind, body.timeline[0]!.principal, body.timeline[0]!.authentication, body.timeline[0]!.reason], ['opened', 'analyst-user', 'bearer', 'same actor']);
    const old = await incident(correlatedId);
    assert.ok(!old.alertIds.includes(moved));
    assert.ok(old.timeline.some((e) => e.kind === 'alert_left' && e.alertId === moved && e.to === promotedId));
    const all = await (await t.request('/api/v1/incidents', { token: t.tokens.viewer })).json() as Incident[];
    assert.deepEqual(all.filter((i) => i.alertIds.includes(moved)).map((i) => i.id), [promotedId]);
  });

  it('moves an incident through its lifecycle with PATCH (no more 405), each step in the timeline with who and why', async () => {
    for (const status of ['investigating', 'contained']) {
      const res = await send('PATCH', `/api/v1/incidents/${promotedId}`, { status, reason: `now ${status}` });
      assert.equal(res.status, 200, await res.clone().text());
      assert.deepEqual(await res.json(), { id: promotedId, status });
    }
    const i = await incident(promotedId);
    assert.equal(i.status, 'contained');
    assert.deepEqual(i.timeline.filter((e) => e.kind === 'status').map((e) => [e.from, e.to, e.reason, e.principal]), [
      ['open', 'investigating', 'now investigating', 'analyst-user'], ['investigating', 'contained', 'now contained', 'analyst-user'],
    ]);
    assert.equal((await send('PATCH', `/api/v1/incidents/${promotedId}`, { status: 'resolved', reason: 'x' })).status, 400);
    assert.equal((await send('PATCH', `/api/v1/incidents/${promotedId}`, { status: 'closed' })).status, 400, 'a reason is required');
    assert.equal((await send('PATCH', '/api/v1/incidents/inc_nope', { status: 'closed', reason: 'x' })).status, 404);
    assert.equal((await send('PATCH', `/api/v1/incidents/${promotedId}`, { status: 'closed', reason: 'x' }, t.tokens.viewer)).status, 403);
  });

  it('assigns an incident', async () => {
    const res = await send('PUT', `/api/v1/incidents/${promotedId}/assignee`, { assignee: 'analyst-user' });
    assert.equal(res.status, 200);
    assert.equal((await incident(promotedId)).assignee, 'analyst-user');
  });

  it('merges the correlated incident into the promoted one: the merged one says where it went and refuses further changes', async () => {
    const res = await send('POST', `/api/v1/incidents/${correlatedId}/merge`, { into: promotedId, reason: 'one intrusion' });
    assert.equal(res.status, 200, await res.clone().text());
    const merged = await incident(correlatedId);
    assert.deepEqual([merged.status, merged.mergedInto, merged.alertIds], ['merged', promotedId, []]);
    const target = await incident(promotedId);
    assert.deepEqual(target.mergedFrom, [correlatedId]);
    assert.deepEqual(target.alertIds.slice().sort(), [...new Set([...inCorrelated, lone])].sort());
    const refused = await send('PATCH', `/api/v1/incidents/${correlatedId}`, { status: 'open', reason: 'x' });
    assert.equal(refused.status, 409);
    assert.deepEqual(await refused.json(), { mergedInto: promotedId, error: `incident ${correlatedId} was merged into incident ${promotedId}; change that one` });
    const listed = await (await t.request('/api/v1/incidents?status=merged', { token: t.tokens.viewer })).json() as Incident[];
    assert.deepEqual(listed.map((i) => i.id), [correlatedId]);
  });

  it('refuses promoting into a closed incident until it is reopened, then adds the alert', async () => {
    assert.equal((await send('PATCH', `/api/v1/incidents/${promotedId}`, { status: 'closed', reason: 'cleaned up' })).status, 200);
    const ingest = await t.request('/api/v1/ingest/network-monitor?logType=http', { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify([http('10.0.0.30', '/y.php', 40)]) });
    assert.equal(ingest.status, 202);
    const alert = ((await (await t.request('/api/v1/alerts?entity=ip:10.0.0.30', { token: t.tokens.viewer })).json()) as { alerts: Array<{ id: string }> }).alerts[0]!.id;
    assert.equal((await send('POST', `/api/v1/incidents/${promotedId}/alerts`, { alertIds: [alert], reason: 'same' })).status, 409);
    assert.equal((await send('PATCH', `/api/v1/incidents/${promotedId}`, { status: 'investigating', reason: 'it came back' })).status, 200);
    const res = await send('POST', `/api/v1/incidents/${promotedId}/alerts`, { alertIds: [alert], reason: 'same' });
    assert.equal(res.status, 200, await res.clone().text());
    assert.ok((await res.json() as Incident).alertIds.includes(alert));
  });

  it('shows the lifecycle in the console projection', async () => {
    const view = await (await t.request('/api/v1/console', { token: t.tokens.console })).json() as { incidents: { byStatus: Record<string, number>; items: Array<{ id: string; status: string; assignee: string | null }> } };
    assert.deepEqual(view.incidents.byStatus, { merged: 1, investigating: 1 });
    assert.deepEqual(view.incidents.items.find((i) => i.id === promotedId)!.assignee, 'analyst-user');
  });
});
