import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fixturePath } from '../helpers/paths.js';
import { startTestInstance, type TestInstance } from '../helpers/instance.js';
import { decodeRecord } from '../../src/log/record.js';
import { WEBSHELL_RULE } from '../helpers/event-fixtures.js';
import { leafHash, verifyInclusion } from '../../src/log/merkle.js';

type AlertDetail = {
  id: string; status: string; ruleId: string; title: string; author?: string; severity: number; confidence: number; evidenceCount: number;
  matchReason: { selections?: string[]; fields?: Array<{ field: string; value: unknown }>; correlation?: string; value?: number };
  evidence: Array<{ eventId: string; summary: string }>; affectedSystems: string[]; firstSeen: string; lastSeen: string; attack: string[];
  reviewHistory: Array<{ at: string; seq: number; principal: string; authentication: string; from: string; to: string; reason: string }>; incidentId?: string;
};

const http = (host: string, uri: string, sec: number) => ({ ts: 1_795_338_000 + sec, uid: `C${host}${sec}`, 'id.orig_h': '198.51.100.7', 'id.orig_p': 40000 + sec, 'id.resp_h': host, 'id.resp_p': 80, method: 'PUT', uri, host: 'web' });

describe('alerts, reviews, incidents and the detection plan', () => {
  let t: TestInstance;
  before(async () => {
    t = await startTestInstance({}, { builtinRules: true });
    t.setPeer('127.0.0.1');
    const res = await t.request('/api/v1/rules', { method: 'POST', token: t.tokens.rule_admin, body: WEBSHELL_RULE, headers: { 'content-type': 'application/yaml' } });
    assert.equal(res.status, 201, await res.clone().text());
    assert.deepEqual(await res.json(), { ruleIds: ['11111111-2222-4333-8444-555555555555'] });
  });
  after(async () => { await t.close(); });

  const ingest = (logType: string, records: unknown[]) => t.request(`/api/v1/ingest/network-monitor?logType=${logType}`, { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify(records) });
  const get = async <T>(path: string, token = t.tokens.analyst) => { const r = await t.request(path, { token }); return { status: r.status, body: await r.json() as T }; };

  it('raises an explainable alert with author, evidence, affected systems and ATT&CK tags, listed in the ingestion result', async () => {
    const res = await ingest('http', [http('10.0.0.5', '/upload/shell.php', 1)]);
    const result = await res.json() as { alerts: Array<{ id: string; ruleId: string; raised: boolean }> };
    const raised = result.alerts.find((a) => a.ruleId === '11111111-2222-4333-8444-555555555555')!;
    assert.equal(raised.raised, true);
    const { body: a } = await get<AlertDetail>(`/api/v1/alerts/${raised.id}`, t.tokens.viewer);
    assert.equal(a.status, 'open');
    assert.equal(a.author, 'Test Author');
    assert.equal(a.severity, 8);
    assert.deepEqual(a.attack, ['attack.persistence', 'attack.t1505.003']);
    assert.deepEqual(a.matchReason.selections, ['sel']);
    assert.deepEqual(a.matchReason.fields!.map((f) => [f.field, f.value]).sort(), [['method', 'PUT'], ['uri', '/upload/shell.php']]);
    assert.ok(a.affectedSystems.includes('ip:10.0.0.5'));
    assert.equal(a.evidence.length, 1);
    assert.match(a.evidence[0]!.summary, /http_request/);
    assert.ok(a.confidence > 0 && a.confidence <= 1);
  });

  it('adds later matches to the open alert instead of raising new ones', async () => {
    await ingest('http', [http('10.0.0.5', '/a.php', 2), http('10.0.0.5', '/b.php', 3)]);
    const { body } = await get<{ alerts: AlertDetail[] }>('/api/v1/alerts?rule=11111111-2222-4333-8444-555555555555');
    assert.equal(body.alerts.length, 1);
    assert.equal(body.alerts[0]!.evidenceCount, 3);
    await ingest('http', [http('10.0.0.6', '/c.php', 4)]);
    const two = await get<{ alerts: AlertDetail[] }>('/api/v1/alerts?rule=11111111-2222-4333-8444-555555555555');
    assert.equal(two.body.alerts.length, 2, 'another host is another group');
  });

  it('records every review with the authenticated principal, and validates reviews', async () => {
    const { body } = await get<{ alerts: AlertDetail[] }>('/api/v1/alerts?rule=11111111-2222-4333-8444-555555555555&entity=ip:10.0.0.5');
    const id = body.alerts[0]!.id;
    const patch = (b: unknown, token = t.tokens.analyst) => t.request(`/api/v1/alerts/${id}`, { method: 'PATCH', token, body: JSON.stringify(b) });
    let res = await patch({ status: 'in_review', reason: 'checking the upload' });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { id, status: 'in_review' });
    res = await patch({ status: 'dismissed', reason: 'authorised deployment' }, t.tokens.admin);
    assert.equal(res.status, 200);
    const { body: a } = await get<AlertDetail>(`/api/v1/alerts/${id}`);
    assert.deepEqual(a.reviewHistory.map((h) => [h.principal, h.authentication, h.from, h.to, h.reason]), [
      ['analyst-user', 'bearer', 'open', 'in_review', 'checking the upload'],
      ['admin-user', 'bearer', 'in_review', 'dismissed', 'authorised deployment'],
    ]);
    // Each entry names its record, so an auditor can ask for that record's inclusion proof.
    await t.transparency.make();
    const { body: cp } = await get<{ tree_size: number; root_hash: string }>('/api/v1/log/checkpoint');
    for (const h of a.reviewHistory) {
      const raw = [...t.inst.log.readRaw(h.seq, h.seq)][0]!.bytes;
      const rec = decodeRecord<{ alertId: string; reason: string }>(raw);
      assert.equal(rec.type, 'AlertReviewed');
      assert.equal(rec.data.reason, h.reason);
      const { body: proof } = await get<{ leaf_index: number; inclusion_path: string[] }>(`/api/v1/log/proofs/inclusion?seq=${h.seq}&size=${cp.tree_size}`);
      assert.ok(verifyInclusion(proof.leaf_index, cp.tree_size, leafHash(raw), proof.inclusion_path.map((x) => Buffer.from(x, 'base64')), Buffer.from(cp.root_hash, 'base64')));
    }
    assert.equal((await get(`/api/v1/log/proofs/inclusion?seq=${cp.tree_size + 1}&size=${cp.tree_size}`)).status, 400);
    assert.equal((await get(`/api/v1/log/proofs/consistency?from=2&to=1`)).status, 400);
    assert.equal((await get(`/api/v1/log/checkpoint?size=999999`)).status, 404);
    assert.equal((await patch({ status: 'dismissed' })).status, 400, 'reason required');
    assert.equal((await patch({ status: 'dismissed', reason: '   ' })).status, 400, 'blank reason');
    assert.equal((await patch({ status: 'closed', reason: 'x' })).status, 400);
    assert.equal((await patch({ status: 'open', reason: 'x'.repeat(4097) })).status, 400);
    assert.equal((await patch({ status: 'open', reason: 'x', principal: 'mallory' })).status, 400, 'the principal comes from the context');
    assert.equal((await patch({ status: 'open', reason: 'x' }, t.tokens.viewer)).status, 403);
    assert.equal((await t.request('/api/v1/alerts/alr_nope', { method: 'PATCH', token: t.tokens.analyst, body: JSON.stringify({ status: 'open', reason: 'x' }) })).status, 404);
    assert.equal((await get('/api/v1/alerts/alr_nope')).status, 404);
    await ingest('http', [http('10.0.0.5', '/d.php', 5)]);
    const after = await get<{ alerts: AlertDetail[] }>('/api/v1/alerts?rule=11111111-2222-4333-8444-555555555555&entity=ip:10.0.0.5');
    assert.equal(after.body.alerts.length, 2, 'a dismissed alert does not absorb new matches');
    assert.equal((await get<{ alerts: AlertDetail[] }>('/api/v1/alerts?status=dismissed')).body.alerts.length, 1);
  });

  it('pages and filters the alert list', async () => {
    const first = await get<{ alerts: AlertDetail[]; nextCursor: string }>('/api/v1/alerts?limit=1');
    assert.equal(first.body.alerts.length, 1);
    const second = await get<{ alerts: AlertDetail[] }>(`/api/v1/alerts?limit=1&cursor=${first.body.nextCursor}`);
    assert.notEqual(second.body.alerts[0]!.id, first.body.alerts[0]!.id);
    assert.ok((await get<{ alerts: AlertDetail[] }>('/api/v1/alerts?minSeverity=9')).body.alerts.every((a) => a.severity >= 9));
    assert.equal((await get('/api/v1/alerts?minSeverity=11')).status, 400);
  });

  it('correlates alerts on a shared system into one incident, and promotes alerts explicitly', async () => {
    // A Zeek scan notice from the same host as a webshell alert: two rules, one system, one incident.
    await ingest('http', [http('10.0.0.8', '/e.php', 10)]);
    await ingest('notice', [{ ts: 1_795_338_020, uid: 'Cn1', 'id.orig_h': '10.0.0.8', 'id.orig_p': 1, 'id.resp_h': '10.0.0.9', 'id.resp_p': 22, note: 'Scan::Port_Scan', msg: 'scan' }]);
    const incidents = (await get<Array<{ id: string; alertIds: string[]; entities: string[]; origin: string }>>('/api/v1/incidents')).body;
    const inc = incidents.find((i) => i.entities.includes('ip:10.0.0.8'))!;
    assert.equal(inc.origin, 'correlated');
    const detail = (await get<{ alerts: Array<{ id: string; ruleId: string; affectedSystems: string[] }>; timeline: Array<{ what: string }> }>(`/api/v1/incidents/${inc.id}`, t.tokens.viewer)).body;
    const on8 = detail.alerts.filter((a) => a.affectedSystems.includes('ip:10.0.0.8')).map((a) => a.ruleId).sort();
    assert.deepEqual(on8, ['11111111-2222-4333-8444-555555555555', '6f0a1c52-3d7e-4c1b-9a31-0b7d6f1e2a21']);
    assert.equal(detail.alerts.length, inc.alertIds.length);
    assert.ok(detail.alerts.every((a) => a.affectedSystems.some((s) => inc.entities.includes(s))));
    assert.ok(detail.timeline.length >= 2);
    const alerts = (await get<{ alerts: AlertDetail[] }>('/api/v1/alerts?entity=ip:10.0.0.6')).body.alerts;
    const res = await t.request('/api/v1/incidents', { method: 'POST', token: t.tokens.analyst, body: JSON.stringify({ alertIds: [alerts[0]!.id], title: 'Second webshell', reason: 'same actor' }) });
    assert.equal(res.status, 201);
    const promoted = await res.json() as { id: string };
    const p = (await get<{ origin: string; timeline: Array<{ principal?: string }> }>(`/api/v1/incidents/${promoted.id}`)).body;
    assert.equal(p.origin, 'promoted');
    assert.equal(p.timeline[0]!.principal, 'analyst-user');
    assert.equal((await t.request('/api/v1/incidents', { method: 'POST', token: t.tokens.analyst, body: JSON.stringify({ alertIds: ['alr_nope'], title: 't', reason: 'r' }) })).status, 400);
    assert.equal((await t.request('/api/v1/incidents', { method: 'POST', token: t.tokens.viewer, body: JSON.stringify({ alertIds: [alerts[0]!.id], title: 't', reason: 'r' }) })).status, 403);
    assert.equal((await get('/api/v1/incidents/inc_nope')).status, 404);
  });

  it('reports ready, degraded and blocked rules with fixes in the detection plan', async () => {
    type Plan = { summary: { ready: number; blocked: number; degraded: number }; rules: Array<{ ruleId: string; state: string; missingCapabilities: Array<{ fix: string; problem: string }> }> };
    const plan = (await get<Plan>('/api/v1/detection-plan?limit=1000', t.tokens.rule_admin)).body;
    const byId = (id: string) => plan.rules.find((r) => r.ruleId === id)!;
    assert.equal(byId('11111111-2222-4333-8444-555555555555').state, 'ready');
    const sudo = byId('6f0a1c52-3d7e-4c1b-9a31-0b7d6f1e2a11');
    assert.equal(sudo.state, 'blocked');
    assert.match(sudo.missingCapabilities[0]!.fix, /linux-journal or syslog-rfc5424 records from sudo/);
    assert.ok(plan.summary.ready >= 1 && plan.summary.blocked >= 1);
    t.setNow('2026-11-25T10:00:00Z');
    const later = (await get<Plan>('/api/v1/detection-plan?limit=1000', t.tokens.viewer)).body;
    const stale = later.rules.find((r) => r.ruleId === '11111111-2222-4333-8444-555555555555')!;
    assert.equal(stale.state, 'degraded');
    assert.match(stale.missingCapabilities[0]!.fix, /network-monitor logType=http: no records in the last 24 h/);
    t.setNow('2026-11-22T10:00:00Z');
  });

  it('enables and disables rules, and refuses invalid imports with a clear 400', async () => {
    const off = await t.request('/api/v1/rules/11111111-2222-4333-8444-555555555555', { method: 'PATCH', token: t.tokens.rule_admin, body: JSON.stringify({ enabled: false, reason: 'noisy' }) });
    assert.equal(off.status, 200);
    const res = await ingest('http', [http('10.0.0.99', '/z.php', 30)]);
    assert.ok(!(await res.json() as { alerts: Array<{ ruleId: string }> }).alerts.some((a) => a.ruleId === '11111111-2222-4333-8444-555555555555'));
    const bad = async (yaml: string, pattern: RegExp) => {
      const r = await t.request('/api/v1/rules', { method: 'POST', token: t.tokens.rule_admin, body: yaml, headers: { 'content-type': 'application/yaml' } });
      assert.equal(r.status, 400, yaml);
      assert.match((await r.json() as { issues: string[] }).issues.join('\n'), pattern);
    };
    await bad('title: x\nlogsource: {product: zeek, service: dns}\ndetection: {s: {query|bogus: a}, condition: s}\n', /unknown modifier|bogus/);
    await bad('title: x\nlogsource: {product: zeek, service: dns}\ndetection: {s: {query: a}, condition: s and (}\n', /condition/);
    await bad('title: x\nlogsource: {product: zeek, service: dns}\ndetection:\n  s:\n    query|re: "a(?i)b"\n  condition: s\n', /document 1, line 4: rule "x": detection\.s: field 'query': regular expression/);
    // Valid Sigma whose logsource no normalizer produces is stored, and blocked in the plan.
    const macos = await t.request('/api/v1/rules', { method: 'POST', token: t.tokens.rule_admin, body: 'title: mac\nid: 0badc0de-0000-4000-8000-000000000001\nlogsource: {product: macos, category: process_creation}\ndetection: {s: {Image: /bin/x}, condition: s}\n', headers: { 'content-type': 'application/yaml' } });
    assert.equal(macos.status, 201);
    const plan = (await get<{ rules: Array<{ ruleId: string; state: string; missingCapabilities: Array<{ fix: string }> }> }>('/api/v1/detection-plan?limit=1000', t.tokens.viewer)).body;
    const entry = plan.rules.find((r) => r.ruleId === '0badc0de-0000-4000-8000-000000000001')!;
    assert.equal(entry.state, 'blocked');
    assert.match(entry.missingCapabilities[0]!.fix, /unmapped logsource \{product: macos, category: process_creation\}/);
    await bad('title: c\ncorrelation: {type: event_count, rules: [nothing_here], group-by: [x], timespan: 5m, condition: {gte: 2}}\n', /references nothing_here/);
    assert.equal((await t.request('/api/v1/rules', { method: 'POST', token: t.tokens.rule_admin, body: 'x', headers: { 'content-type': 'application/json' } })).status, 415);
    assert.equal((await get('/api/v1/rules/nope', t.tokens.viewer)).status, 404);
  });

  it('bulk import: a YAML stream or a directory as JSON; valid rules in, each invalid document named; 415 and 400 otherwise', async () => {
    const post = (body: string, type: string) => t.request('/api/v1/rules/bulk', { method: 'POST', token: t.tokens.rule_admin, body, headers: { 'content-type': type } });
    const rule = (n: number, ls = '{product: zeek, service: dns}') => `title: bulk ${n}\nid: b0000000-0000-4000-8000-00000000000${n}\nlogsource: ${ls}\ndetection: {s: {query: x${n}}, condition: s}\n`;
    const stream = await post(`${rule(1)}---\n${rule(2, '{product: okta, service: okta}')}---\ntitle: bad\nlogsource: {product: zeek, service: dns}\ndetection: {s: {query|nope: x}, condition: s}\n`, 'application/yaml');
    assert.equal(stream.status, 201);
    const summary = await stream.json() as { imported: number; blocked: number; blockedByLogsource: unknown[]; invalid: Array<{ file: string; document: number; line: number; error: string }> };
    assert.equal(summary.imported, 2);
    assert.deepEqual(summary.blockedByLogsource, [{ logsource: '{product: okta, service: okta}', rules: 1 }]);
    assert.deepEqual(summary.invalid.map((i) => [i.file, i.document, i.line]), [['body', 3, 13]]);
    assert.match(summary.invalid[0]!.error, /unknown modifier 'nope'/);
    const dir = await post(JSON.stringify({ files: [{ name: 'dns/three.yml', text: rule(3) }] }), 'application/json');
    assert.equal(dir.status, 201);
    assert.deepEqual((await dir.json() as { ruleIds: string[] }).ruleIds, ['b0000000-0000-4000-8000-000000000003']);
    const none = await post(JSON.stringify({ files: [{ name: 'x.yml', text: 'title: [' }] }), 'application/json');
    assert.equal(none.status, 400);
    assert.match((await none.json() as { issues: string[] }).issues[0]!, /^x\.yml: YAML document 1 \(line 1\)/);
    assert.equal((await post('x', 'text/plain')).status, 415);
    assert.equal((await post(JSON.stringify({ files: [] }), 'application/json')).status, 400);
  });

  it('imports every SigmaHQ sample rule, and the correlation examples that have a Vigil logsource', async () => {
    const dir = fixturePath('sigma', 'rules');
    for (const file of readdirSync(dir)) {
      const res = await t.request('/api/v1/rules', { method: 'POST', token: t.tokens.rule_admin, body: readFileSync(`${dir}/${file}`, 'utf8'), headers: { 'content-type': 'application/yaml' } });
      assert.equal(res.status, 201, `${file}: ${await res.clone().text()}`);
    }
    const sshd = readFileSync(fixturePath('sigma', 'correlation-examples', 'constructed_linux_sshd_bruteforce_then_success.yml'), 'utf8');
    assert.equal((await t.request('/api/v1/rules', { method: 'POST', token: t.tokens.rule_admin, body: sshd, headers: { 'content-type': 'application/yaml' } })).status, 201);
    const detail = (await get<{ author: string; text: string }>('/api/v1/rules/a8322756-015c-42e7-afb1-436e85ed3ff5', t.tokens.viewer)).body;
    assert.equal(detail.author, 'Saw Winn Naung , Azure-Sentinel', 'SigmaHQ authors are kept (DRL 1.1)');
    assert.match(detail.text, /tor-gateways\.de/);
  });
});
