import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { loadBuiltinPack } from '../../src/detection/builtin-pack.js';
import { parseSigmaText } from '../../src/detection/sigma-yaml.js';
import { startTestInstance, type TestInstance } from '../helpers/instance.js';

type Alert = { id: string; ruleId: string; title: string; author?: string; severity: number; evidenceCount: number; affectedSystems: string[]; status: string };
type Result = { accepted: unknown[]; alerts: Array<{ id: string; ruleId: string; title: string; raised: boolean }>; incidents: Array<{ id: string }> };

const RULE = {
  sshFailure: '6f0a1c52-3d7e-4c1b-9a31-0b7d6f1e2a01',
  bruteForce: '6f0a1c52-3d7e-4c1b-9a31-0b7d6f1e2a03',
  successAfter: '6f0a1c52-3d7e-4c1b-9a31-0b7d6f1e2a04',
  sudoFailure: '6f0a1c52-3d7e-4c1b-9a31-0b7d6f1e2a11',
  userCreated: '6f0a1c52-3d7e-4c1b-9a31-0b7d6f1e2a12',
  scanNotice: '6f0a1c52-3d7e-4c1b-9a31-0b7d6f1e2a21',
  portSweep: '6f0a1c52-3d7e-4c1b-9a31-0b7d6f1e2a23',
  dnsLongLabel: '6f0a1c52-3d7e-4c1b-9a31-0b7d6f1e2a24',
  dnsTxtBurst: '6f0a1c52-3d7e-4c1b-9a31-0b7d6f1e2a26',
  exitNode: '6f0a1c52-3d7e-4c1b-9a31-0b7d6f1e2a31',
  tailnetChange: '6f0a1c52-3d7e-4c1b-9a31-0b7d6f1e2a32',
  unapproved: '6f0a1c52-3d7e-4c1b-9a31-0b7d6f1e2a41',
  repeated401: '6f0a1c52-3d7e-4c1b-9a31-0b7d6f1e2a43',
} as const;

const syslog = (sec: number, app: string, msg: string, host = 'bastion-01') => ({ message: `<38>1 2026-11-22T09:${String(Math.floor(sec / 60)).padStart(2, '0')}:${String(sec % 60).padStart(2, '0')}.000000Z ${host} ${app} ${1000 + sec} - - ${msg}` });
const zeek = (over: Record<string, unknown>) => ({ ts: 1_795_338_000 + Math.random(), uid: `C${Math.random().toString(36).slice(2)}`, 'id.orig_h': '10.0.0.66', 'id.orig_p': 40000, 'id.resp_h': '10.0.0.10', 'id.resp_p': 80, proto: 'tcp', ...over });

describe('built-in rule pack (rules as code)', () => {
  let t: TestInstance;
  before(async () => {
    t = await startTestInstance({ server: { approvedSourceAddresses: ['10.9.0.0/16'] } }, { builtinRules: true });
    t.setPeer('10.9.0.1');
  });
  after(async () => { await t.close(); });

  const ingest = async (path: string, records: unknown[]) => {
    const res = await t.request(`/api/v1/ingest/${path}`, { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify(records) });
    assert.equal(res.status, 202, await res.clone().text());
    return await res.json() as Result;
  };
  const alertsOf = async (ruleId: string) => (await (await t.request(`/api/v1/alerts?rule=${ruleId}`, { token: t.tokens.viewer })).json() as { alerts: Alert[] }).alerts;
  const fired = (r: Result, ruleId: string) => r.alerts.some((a) => a.ruleId === ruleId);

  it('every built-in rule compiles and carries its author', async () => {
    const docs = parseSigmaText(loadBuiltinPack().text);
    assert.ok(docs.ok);
    const rules = (await (await t.request('/api/v1/rules', { token: t.tokens.viewer })).json() as { rules: Array<{ id: string; author: string; source: string }> }).rules;
    assert.equal(rules.length, docs.docs.length);
    assert.ok(rules.every((r) => r.author === 'Vigil' && r.source === 'builtin'));
  });

  it('SSH brute force: five failures from one source raise one alert; four do not; more failures grow it', async () => {
    const four = await ingest('syslog-rfc5424', [0, 1, 2, 3].map((i) => syslog(i, 'sshd', `Failed password for root from 203.0.113.9 port ${50000 + i} ssh2`)));
    assert.equal(fired(four, RULE.bruteForce), false);
    const fifth = await ingest('syslog-rfc5424', [syslog(4, 'sshd', 'Failed password for root from 203.0.113.9 port 50004 ssh2')]);
    assert.equal(fired(fifth, RULE.bruteForce), true);
    const other = await ingest('syslog-rfc5424', [0, 1, 2, 3].map((i) => syslog(10 + i, 'sshd', `Failed password for bob from 198.51.100.3 port ${51000 + i} ssh2`)));
    assert.equal(fired(other, RULE.bruteForce), false, 'another source has its own count');
    assert.equal((await alertsOf(RULE.sshFailure)).length, 0, 'base rules referenced by a correlation raise no alerts of their own');
  });

  it('a success after the brute force from the same source is critical; from elsewhere it is not', async () => {
    const elsewhere = await ingest('syslog-rfc5424', [syslog(20, 'sshd', 'Accepted password for alice from 192.0.2.77 port 40000 ssh2')]);
    assert.equal(fired(elsewhere, RULE.successAfter), false);
    const same = await ingest('syslog-rfc5424', [syslog(21, 'sshd', 'Accepted password for root from 203.0.113.9 port 40001 ssh2')]);
    assert.equal(fired(same, RULE.successAfter), true);
    const [alert] = await alertsOf(RULE.successAfter);
    assert.equal(alert!.severity, 10);
  });

  it('sudo failures and user creation raise; a plain sudo command does not', async () => {
    const ok = await ingest('syslog-rfc5424', [syslog(30, 'sudo', 'alice : TTY=pts/0 ; PWD=/home/alice ; USER=root ; COMMAND=/usr/bin/id')]);
    assert.equal(fired(ok, RULE.sudoFailure), false);
    const bad = await ingest('syslog-rfc5424', [syslog(31, 'sudo', 'mallory : 3 incorrect password attempts ; TTY=pts/1 ; PWD=/tmp ; USER=root ; COMMAND=/bin/bash')]);
    assert.equal(fired(bad, RULE.sudoFailure), true);
    const created = await ingest('syslog-rfc5424', [syslog(32, 'useradd', 'new user: name=backdoor, UID=1002, GID=1002, home=/home/backdoor, shell=/bin/bash, from=/dev/pts/1')]);
    assert.equal(fired(created, RULE.userCreated), true);
    const modified = await ingest('syslog-rfc5424', [syslog(33, 'passwd', 'pam_unix(passwd:chauthtok): password changed for alice')]);
    assert.equal(fired(modified, RULE.userCreated), false);
  });

  it('Zeek scan notices, port sweeps and DNS tunnelling signs raise; ordinary traffic does not', async () => {
    const notice = await ingest('network-monitor?logType=notice', [zeek({ note: 'Scan::Port_Scan', msg: '10.0.0.66 scanned at least 15 unique ports', src: '10.0.0.66' })]);
    assert.equal(fired(notice, RULE.scanNotice), true);
    const benign = await ingest('network-monitor?logType=notice', [zeek({ note: 'SSL::Invalid_Server_Cert', msg: 'bad cert' })]);
    assert.equal(fired(benign, RULE.scanNotice), false);
    const few = await ingest('network-monitor?logType=conn', Array.from({ length: 24 }, (_, i) => zeek({ 'id.resp_p': 1000 + i, conn_state: 'S0' })));
    assert.equal(fired(few, RULE.portSweep), false);
    const sweep = await ingest('network-monitor?logType=conn', [zeek({ 'id.resp_p': 2000, conn_state: 'S0' })]);
    assert.equal(fired(sweep, RULE.portSweep), true);
    const long = await ingest('network-monitor?logType=dns', [zeek({ 'id.resp_p': 53, proto: 'udp', query: 'mzxw6ytboi2dcmrtgq3dmnzygeztinjwg4ydcmrtgq3d.t.example.net', qtype_name: 'A' })]);
    assert.equal(fired(long, RULE.dnsLongLabel), true);
    const short = await ingest('network-monitor?logType=dns', [zeek({ 'id.resp_p': 53, proto: 'udp', query: 'www.example.org', qtype_name: 'A' })]);
    assert.equal(fired(short, RULE.dnsLongLabel), false);
    const txt = await ingest('network-monitor?logType=dns', Array.from({ length: 50 }, (_, i) => zeek({ 'id.orig_h': '10.0.0.77', 'id.resp_p': 53, proto: 'udp', query: `q${i}.t.example.net`, qtype_name: 'TXT' })));
    assert.equal(fired(txt, RULE.dnsTxtBurst), true);
  });

  it('Tailscale exit-node traffic and ACL or device changes raise; virtual traffic does not', async () => {
    const flow = (kind: string) => ({ logged: '2026-11-22T09:00:10Z', nodeId: 'nNode1CNTRL', start: '2026-11-22T09:00:00Z', end: '2026-11-22T09:00:05Z', [kind]: [{ proto: 6, src: '100.64.0.5:40000', dst: '203.0.113.80:443', txPkts: 1, txBytes: 60, rxPkts: 1, rxBytes: 60 }] });
    assert.equal(fired(await ingest('mesh-vpn-logs?logType=network', [flow('virtualTraffic')]), RULE.exitNode), false);
    assert.equal(fired(await ingest('mesh-vpn-logs?logType=network', [flow('exitTraffic')]), RULE.exitNode), true);
    const acl = { eventGroupID: 'g1', origin: 'ADMIN_CONSOLE', actor: { id: 'u1', type: 'USER', loginName: 'alice@example.com', displayName: 'Alice' }, target: { id: 'example.com', name: 'example.com', type: 'TAILNET', property: 'ACL' }, type: 'CONFIG', eventTime: '2026-11-22T09:01:00Z', action: 'UPDATE', old: '{}', new: '{"acls":[]}' };
    assert.equal(fired(await ingest('mesh-vpn-logs?logType=configuration', [acl]), RULE.tailnetChange), true);
    const user = { ...acl, eventGroupID: 'g2', target: { id: 'u9', name: 'bob@example.com', type: 'USER', property: 'ROLE' }, eventTime: '2026-11-22T09:02:00Z' };
    assert.equal(fired(await ingest('mesh-vpn-logs?logType=configuration', [user]), RULE.tailnetChange), false);
  });

  it('API access from an unapproved device and repeated 401s raise alerts', async () => {
    t.setPeer('10.9.1.1');
    await t.request('/api/v1/me', { token: t.tokens.viewer });
    assert.equal((await alertsOf(RULE.unapproved)).length, 0, 'an approved source raises nothing');
    t.setPeer('192.0.2.200');
    await t.request('/api/v1/me', { token: t.tokens.viewer });
    const unapproved = await alertsOf(RULE.unapproved);
    assert.equal(unapproved.length, 1);
    assert.ok(unapproved[0]!.affectedSystems.includes('ip:192.0.2.200'));
    t.setPeer('192.0.2.201');
    for (let i = 0; i < 9; i++) await t.request('/api/v1/me', { token: 'vgl_wrong' });
    await t.flushRefusals();
    assert.equal((await alertsOf(RULE.repeated401)).length, 0, 'a summary of nine failures raises nothing');
    for (let i = 0; i < 10; i++) await t.request('/api/v1/me', { token: 'vgl_wrong' });
    await t.flushRefusals();
    const burst = await alertsOf(RULE.repeated401);
    assert.equal(burst.length, 1, 'a summary of ten failures from one address raises the alert');
    assert.ok(burst[0]!.affectedSystems.includes('ip:192.0.2.201'));
    t.setPeer('10.9.0.1');
  });

  it("the plan's ready is checked against a firing: every rule that fired above is ready, and every ready rule fired", async () => {
    const plan = (await (await t.request('/api/v1/detection-plan?limit=1000', { token: t.tokens.viewer })).json() as { rules: Array<{ ruleId: string; title: string; state: string; missingCapabilities: unknown[] }> }).rules;
    const rules = (await (await t.request('/api/v1/rules', { token: t.tokens.viewer })).json() as { rules: Array<{ id: string; kind: string; correlation?: { rules: string[] } }> }).rules;
    const names = new Map(parseSigmaText(loadBuiltinPack().text).ok ? (parseSigmaText(loadBuiltinPack().text) as { docs: Array<{ id: string; name?: string }> }).docs.map((d) => [d.name ?? d.id, d.id]) : []);
    const alerted = new Set<string>();
    for (const r of rules) if ((await alertsOf(r.id)).length > 0) alerted.add(r.id);
    // A base rule referenced by a correlation raises nothing itself: it fired when its correlation did.
    const firedRules = new Set(alerted);
    for (const r of rules) if (alerted.has(r.id)) for (const ref of r.correlation?.rules ?? []) firedRules.add(names.get(ref) ?? ref);
    for (let grew = true; grew;) {
      grew = false;
      for (const r of rules) if (firedRules.has(r.id)) for (const ref of r.correlation?.rules ?? []) { const id = names.get(ref) ?? ref; if (!firedRules.has(id)) { firedRules.add(id); grew = true; } }
    }
    for (const entry of plan) {
      if (firedRules.has(entry.ruleId)) assert.equal(entry.state, 'ready', `${entry.title} fired, so it is ready: ${JSON.stringify(entry.missingCapabilities)}`);
      if (entry.state === 'ready') assert.ok(firedRules.has(entry.ruleId), `${entry.title} is called ready, so it must have fired on the evidence sent`);
    }
    assert.ok(firedRules.size >= 15, `most built-in rules were exercised (${firedRules.size})`);
  });
});
