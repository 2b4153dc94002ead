import { recordCredentialChanges } from '../../src/cli/instance/credential-recorder.js';
import { readRegistry } from '../../src/auth/registry.js';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AUTHORITY_EVENTS, INSTANCE_EVENTS } from '../../src/events/union.js';
import type { LogRecord } from '../../src/kernel/record.js';
import type { Mailer } from '../../src/setup/mailer.js';
import { enrollCollector, envelopeText, issueToken, makePayload, postEnrollment, submit } from '../collector/helpers.js';
import { startTestInstance, makeEvent, type TestInstance } from '../helpers/instance.js';
import { schemaIssues } from '../helpers/stored-events.js';
import { generateKeyPair } from '../../src/kernel/ed25519.js';
import { newKey, provision, sendSnapshot, startTestAuthority, type TestAuthority, type TestKey } from '../setup/harness.js';
import { ENROLLMENT_DOMAIN, signedBytes } from '../../src/setup/identity-key.js';
import { decideExportConfiguration, decideExportCursor, decideExportState } from '../../src/commands/export-state.js';
import type { ExportsState } from '../../src/projections/exports.js';
import { WEBSHELL_RULE, WEBSHELL_RULE_ID } from '../helpers/event-fixtures.js';
import * as v from 'valibot';
import { decideIngestEvents } from '../../src/commands/ingest-events.js';
import { decideWitnessRefusal } from '../../src/commands/witness-refusal.js';
import { RetentionSchema } from '../../src/log/retention/settings.js';
import type { NormalizedEvent } from '../../src/events/normalized-event.js';
import { startRetention } from '../../src/services/retention/scheduler.js';
import { archiveDirOf } from '../../src/services/retention/expire.js';
import { join } from 'node:path';
import { openLmdbStore } from '../../src/log/lmdb-store.js';
import { openLmdbLog } from '../../src/log/lmdb-log.js';
import { logQuarantineTail } from '../../src/cli/signer-commands.js';
import { logRotateKey } from '../../src/cli/rotate-key.js';
import { openKeeperHost } from '../../src/log/head-signer.js';
import { loadLogKey } from '../../src/log/log-key.js';
import { signerKeyFile, signerStateDir } from '../../src/cli/instance/head-signing.js';
import { frontierOfText } from '../../src/log/merkle-tree.js';
import { appendLeaf, frontierRoot, leafHash } from '../../src/log/merkle.js';

/** A Zeek http record from 198.51.100.7 to `host`, `sec` seconds after 2026-11-22T09:00:00Z. */
const http = (host: string, uri: string, sec: number) => ({ ts: 1_795_338_000 + sec, uid: `C${host}${sec}`, 'id.orig_h': '198.51.100.7', 'id.orig_p': 40000 + sec, 'id.resp_h': host, 'id.resp_p': 80, method: 'PUT', uri, host: 'web' });

/** A failed sshd logon from `ip`, as the journal normalizer would store it. */
const sshFailure = (n: number, ip: string) => makeEvent({
  id: `ssh-${n}`, category: 'identity', class: 'authentication', activity: 'logon', outcome: 'failure', time: `2026-11-22T09:01:${String(n).padStart(2, '0')}Z`,
  source: { adapter: 'linux-journal', instance: 'bastion', recordId: `ssh-${n}` }, entityKeys: [`ip:${ip}`, 'host:bastion', 'user:root'],
  actor: { user: 'root' }, sourceEndpoint: { ip }, destinationEndpoint: { host: 'bastion' },
  attributes: { SYSLOG_IDENTIFIER: 'sshd', MESSAGE: 'Failed password', src_ip: ip, user: 'root' },
});

/** Types in `schemas` that no record of `records` has (the legacy ones are written by no current flow). */
function unwritten(records: readonly LogRecord[], schemas: object, legacy: readonly string[] = []): string[] {
  const seen = new Set(records.map((r) => r.type));
  return Object.keys(schemas).filter((type) => !seen.has(type) && !legacy.includes(type));
}

describe('stored events of the instance', () => {
  let t: TestInstance;
  before(async () => { t = await startTestInstance({}, { builtinRules: true }); });
  after(async () => { await t.close(); });

  it('every record of a representative flow parses with the schema of its type, and the flow writes every current type', async () => {
    t.setPeer('127.0.0.1');
    const ok = async (res: Response | Promise<Response>, status: number) => {
      const r = await res;
      assert.equal(r.status, status, await r.clone().text());
      return r.json() as Promise<any>;
    };
    const ingestRaw = (logType: string, records: unknown[]) => t.request(`/api/v1/ingest/network-monitor?logType=${logType}`, { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify(records) });
    await ok(t.request('/api/v1/rules', { method: 'POST', token: t.tokens.rule_admin, body: WEBSHELL_RULE, headers: { 'content-type': 'application/yaml' } }), 201);
    // A webshell alert on 10.0.0.8, grown by a later match, then a scan notice from the same host: a correlated incident.
    await ok(ingestRaw('http', [http('10.0.0.8', '/e.php', 10)]), 202);
    await ok(ingestRaw('http', [http('10.0.0.8', '/f.php', 11)]), 202);
    await ok(ingestRaw('notice', [{ ts: 1_795_338_020, uid: 'Cn1', 'id.orig_h': '10.0.0.8', 'id.orig_p': 1, 'id.resp_h': '10.0.0.9', 'id.resp_p': 22, note: 'Scan::Port_Scan', msg: 'scan' }]), 202);
    // Five failed sshd logons from the same address: single-event alerts join the incident, and the brute-force correlation fires.
    const ssh = await ok(t.request('/api/v1/events', { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify(Array.from({ length: 5 }, (_, n) => sshFailure(n, '10.0.0.8'))) }), 202);
    assert.ok(ssh.alerts.some((a: { ruleId: string }) => a.ruleId === '6f0a1c52-3d7e-4c1b-9a31-0b7d6f1e2a03'), 'the brute-force correlation fired');
    const alerts = (await ok(t.request('/api/v1/alerts', { token: t.tokens.analyst }), 200)).alerts as Array<{ id: string }>;
    await ok(t.request(`/api/v1/alerts/${alerts[0]!.id}`, { method: 'PATCH', token: t.tokens.analyst, body: JSON.stringify({ status: 'in_review', reason: 'checking', disposition: 'true_positive' }) }), 200);
    await ok(t.request(`/api/v1/alerts/${alerts[0]!.id}/assignee`, { method: 'PUT', token: t.tokens.analyst, body: JSON.stringify({ assignee: 'analyst-user' }) }), 200);
    await ok(t.request(`/api/v1/alerts/${alerts[0]!.id}/notes`, { method: 'POST', token: t.tokens.analyst, body: JSON.stringify({ text: 'seen before' }) }), 201);
    await ok(t.request('/api/v1/alerts/reviews', { method: 'POST', token: t.tokens.analyst, body: JSON.stringify({ alertIds: [alerts[1]!.id], status: 'in_review', disposition: 'benign', reason: 'bulk' }) }), 200);
    const promoted = await ok(t.request('/api/v1/incidents', { method: 'POST', token: t.tokens.analyst, body: JSON.stringify({ alertIds: [alerts[0]!.id], title: 'Promoted', reason: 'same actor' }) }), 201);
    const second = await ok(t.request('/api/v1/incidents', { method: 'POST', token: t.tokens.analyst, body: JSON.stringify({ alertIds: [alerts[1]!.id], title: 'Second', reason: 'another' }) }), 201);
    await ok(t.request(`/api/v1/incidents/${promoted.id}`, { method: 'PATCH', token: t.tokens.analyst, body: JSON.stringify({ status: 'investigating', reason: 'on it' }) }), 200);
    await ok(t.request(`/api/v1/incidents/${promoted.id}/assignee`, { method: 'PUT', token: t.tokens.analyst, body: JSON.stringify({ assignee: 'analyst-user' }) }), 200);
    await ok(t.request(`/api/v1/incidents/${second.id}/merge`, { method: 'POST', token: t.tokens.analyst, body: JSON.stringify({ into: promoted.id, reason: 'same actor' }) }), 200);
    // Exceptions (docs/detections.md, "Exceptions"): one keeps a webshell match on 10.0.0.7 from alerting, is changed,
    // reminded of and expires through the self-monitor's checks below; another is revoked.
    const exception = (over: Record<string, unknown>) => JSON.stringify({ scope: { kind: 'rule', ruleId: '11111111-2222-4333-8444-555555555555' }, detection: { sel: { 'id.resp_h': '10.0.0.7' }, condition: 'sel' }, reason: 'the upload test host', owner: 'analyst-user', expiresAt: '2026-11-24T10:00:30.000Z', ...over });
    const kept = await ok(t.request('/api/v1/exceptions', { method: 'POST', token: t.tokens.analyst, body: exception({}) }), 201);
    await ok(t.request(`/api/v1/exceptions/${kept.id}`, { method: 'PUT', token: t.tokens.analyst, body: exception({ ticket: 'CHG-123', comment: 'ticket' }) }), 200);
    await ok(ingestRaw('http', [http('10.0.0.7', '/g.php', 13)]), 202);
    const revoked = await ok(t.request('/api/v1/exceptions', { method: 'POST', token: t.tokens.analyst, body: exception({ scope: { kind: 'all' } }) }), 201);
    await ok(t.request(`/api/v1/exceptions/${revoked.id}/revoke`, { method: 'POST', token: t.tokens.analyst, body: JSON.stringify({ comment: 'too broad' }) }), 200);
    // The webshell rule suppressed by its source through the API: a suppressed alert raised, then grown; then cleared.
    const suppression = `/api/v1/rules/${WEBSHELL_RULE_ID}/suppression`;
    await ok(t.request(suppression, { method: 'PUT', token: t.tokens.rule_admin, body: JSON.stringify({ by: ['sourceEndpoint.ip'], for: '1h', reason: 'scanner' }) }), 200);
    await ok(ingestRaw('http', [http('10.0.0.6', '/g.php', 13), http('10.0.0.5', '/h.php', 14)]), 202);
    await ok(ingestRaw('http', [http('10.0.0.4', '/i.php', 15)]), 202);
    const suppressed = (await ok(t.request(`/api/v1/alerts?rule=${WEBSHELL_RULE_ID}`, { token: t.tokens.analyst }), 200)).alerts.filter((a: { suppression?: unknown }) => a.suppression);
    assert.deepEqual(suppressed.map((a: { suppressedCount: number }) => a.suppressedCount), [2]);
    await ok(t.request(suppression, { method: 'DELETE', token: t.tokens.rule_admin, body: JSON.stringify({ reason: 'done' }) }), 200);
    // Threat intelligence (docs/intel.md): a STIX bundle posted as a feed, then a DNS query its domain names.
    const indicator = { type: 'indicator', spec_version: '2.1', id: 'indicator--1', created: '2026-01-01T00:00:00Z', modified: '2026-01-01T00:00:00Z', pattern_type: 'stix', pattern: "[domain-name:value = 'evil.example']", valid_from: '2026-01-01T00:00:00Z' };
    await ok(t.request('/api/v1/intel/bundles', { method: 'POST', token: t.tokens.rule_admin, body: JSON.stringify({ type: 'bundle', id: 'bundle--1', objects: [indicator] }) }), 200);
    await ok(ingestRaw('dns', [{ ts: 1_795_338_030, uid: 'Cq1', 'id.orig_h': '10.0.0.5', 'id.orig_p': 53000, 'id.resp_h': '10.0.0.53', 'id.resp_p': 53, proto: 'udp', query: 'evil.example' }]), 202);
    // A hunt (docs/hunting.md): its audit record.
    await ok(t.request('/api/v1/search', { method: 'POST', token: t.tokens.analyst, body: JSON.stringify({ query: 'class:dns_query | stats count() by attributes.query', since: '2026-01-01T00:00:00Z' }) }), 200);
    await ok(t.request('/api/v1/rules/11111111-2222-4333-8444-555555555555', { method: 'PATCH', token: t.tokens.rule_admin, body: JSON.stringify({ enabled: false, reason: 'noisy' }) }), 200);
    // A rule whose regular expression backtracks without bound, stopped over its budget by a poison uri: quarantined.
    const hostile = `title: Backtracking\nid: 57c00000-0000-4000-8000-000000000001\nlogsource: {product: zeek, service: http}\ndetection: {sel: {uri|re: '^(?!b)(a+)+$'}, condition: sel}\nlevel: low\n`;
    await ok(t.request('/api/v1/rules', { method: 'POST', token: t.tokens.rule_admin, body: hostile, headers: { 'content-type': 'application/yaml' } }), 201);
    await ok(ingestRaw('http', [http('10.0.0.8', `${'a'.repeat(29)}!`, 12)]), 202);
    // A console session: signed in with a token through the sign-in form, then signed out.
    const signInPage = await t.app.request('/sign-in');
    const pre = /vigil-sign-in=([^;]+)/.exec(signInPage.headers.getSetCookie().join('\n'))![1]!;
    const signInForm = new URLSearchParams({ token: t.tokens.analyst, _csrf: /name="_csrf" value="([^"]+)"/.exec(await signInPage.text())![1]! }).toString();
    const signedIn = await t.app.request('/sign-in', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(signInForm.length), cookie: `vigil-sign-in=${pre}` }, body: signInForm });
    assert.equal(signedIn.status, 303);
    const session = /vigil-console=([^;]+)/.exec(signedIn.headers.getSetCookie().join('\n'))![1]!;
    const overview = await (await t.app.request('/', { headers: { cookie: `vigil-console=${session}` } })).text();
    const signOutForm = `_csrf=${/name="_csrf" value="([^"]+)"/.exec(overview)![1]!}`;
    assert.equal((await t.app.request('/sign-out', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `vigil-console=${session}` }, body: signOutForm })).status, 303);
    // A collector: enrolled, one accepted submission, one gap, and an enrollment with a used token.
    const key = await enrollCollector(t, 'web-01');
    await ok(submit(t, envelopeText(makePayload('web-01', 1, 2), key)), 202);
    assert.equal((await submit(t, envelopeText(makePayload('web-01', 5), key))).status, 409);
    const token = await issueToken(t, 'web-02');
    assert.equal((await postEnrollment(t, 'web-02', token, generateKeyPair().publicKey)).status, 201);
    assert.equal((await postEnrollment(t, 'web-02', token, generateKeyPair().publicKey)).status, 401);
    // The credential registry as the service records it on loading the file.
    assert.ok(await recordCredentialChanges(t.inst.pipeline, readRegistry(t.credentialsFile), '2026-11-22T10:00:05.000Z') > 0);
    // Failed authentications from one address, counted into a refusal summary.
    t.setPeer('203.0.113.9');
    for (let i = 0; i < 3; i++) assert.equal((await t.request('/api/v1/me', { token: `vgl_guess${i}` })).status, 401);
    await t.flushRefusals();
    // Export enabled, then a destination failing (the deciders the exporter runs at start and on a state change).
    const ctx = { now: '2026-11-22T10:00:00.000Z', actor: { id: 'vigil', authentication: 'service' } };
    const hook = { name: 'hook', kind: 'webhook' as const, target: 'https://tickets.example/hook', carries: ['alerts'], includeRaw: false };
    await t.inst.writer.execute((m) => decideExportConfiguration(m.exports, [hook]), ctx);
    await t.inst.pipeline.dispatch({ decide: (m) => decideExportState(m.exports, { destination: 'hook', kind: 'webhook', state: 'failing', reason: 'down', lagRecords: 3 }, ctx), ctx });
    // A cluster's leader records a destination's cursor in the log after a delivered batch.
    await t.inst.writer.execute((m) => decideExportCursor(m.exports, 'hook', t.inst.log.head().seq), ctx);
    // A witness the instance pushes its checkpoints to refuses one as inconsistent with what it cosigned.
    const refused = { witness: 'witness.example/w1', url: 'https://witness.example', size: 40, witnessSize: 50, status: 409, reason: 'the witness cosigned a larger tree of this log', answer: '50\n' };
    await t.inst.pipeline.dispatch({ decide: (m) => decideWitnessRefusal({ witnesses: m.witnesses, alerts: m.alerts }, refused, ctx), ctx });
    // The self-monitor: the disk past its flood mark (a write refused, counted), every source silent a
    // day later, then space back and one source reporting again (both alerts resolved).
    t.setPeer('127.0.0.1');
    t.setSpace({ freeBytes: 1024, totalBytes: 200 * 1024 ** 3 });
    t.setNow('2026-11-24T10:00:00.000Z');
    assert.equal((await t.request('/api/v1/events', { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify([makeEvent({ id: 'refused-1' })]) })).status, 507);
    await t.flushRefusals();
    await t.monitor.check();
    t.setSpace({ freeBytes: 100 * 1024 ** 3, totalBytes: 200 * 1024 ** 3 });
    await ok(t.request('/api/v1/events', { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify([makeEvent({ id: 'back-1', source: { adapter: 'linux-journal', instance: 'bastion', recordId: 'back-1' } })]) }), 202);
    t.setNow('2026-11-24T10:01:00.000Z');
    await t.monitor.check();

    // Retention: the policy recorded, then the oldest segment archived, what outlives it carried forward, and the cut.
    const beforeExpiry = [...t.inst.log.read(1)];
    await Promise.all(Array.from({ length: 300 }, (_, i) => t.inst.writer.execute((m) => decideIngestEvents(m, [makeEvent({ id: `fill-${i}` }) as unknown as NormalizedEvent]), ctx)));
    const retention = v.parse(RetentionSchema, { enabled: true, evidenceDays: 0, segmentRecords: 256 });
    const runner = await startRetention({
      log: t.inst.log, pipeline: t.inst.pipeline, carried: t.inst.carried, checkpoints: t.transparency, origin: t.transparency.verifier.name,
      settings: retention, archiveDir: archiveDirOf(retention, t.config.storage.path),
    }, () => new Date('2026-12-30T00:00:00.000Z'), () => {});
    assert.ok((await runner.run()).length > 0, 'a segment expired');
    await runner.stop();

    // Signed heads (docs/log.md): an intruder's record past the last signed head, set aside by the operator; then a
    // signature the store never committed (the writer stopped in between), given up at the next start.
    await t.restart(async (path) => {
      const store = openLmdbStore(path);
      await openLmdbLog(store).append([{ type: 'AlertReviewed', at: '2026-12-30T00:00:00.000Z', data: { forged: true } }]);
      await store.close();
      const moved = await logQuarantineTail(t.config, join(t.dir, 'quarantine'), 'not ours');
      assert.equal(moved.quarantined, 1);
      // The operator rotates the signing key (docs/log.md, "Rotating the signing key"): LogKeyRotated.
      assert.ok((await logRotateKey(t.config)).recordedAt);
      const host = openKeeperHost(loadLogKey(signerKeyFile(t.config)), signerStateDir(t.config));
      const { size, roots } = host.keeper.current();
      const f = frontierOfText(size, roots);
      const lost = leafHash(new Uint8Array([1, 2, 3]));
      appendLeaf(f, lost);
      host.extend([lost], size + 1, frontierRoot(f));
      host.flush();
    });

    const records = [...beforeExpiry, ...[...t.inst.log.read(1)].filter((r) => r.seq > beforeExpiry.length)];
    assert.deepEqual(schemaIssues(records, INSTANCE_EVENTS), []);
    assert.deepEqual(unwritten(records, INSTANCE_EVENTS, ['DetectionHits']), [], 'the flow writes every type the instance writes today');
    assert.ok(!records.some((r) => r.type === 'DetectionHits'), 'the legacy hits type is no longer written');
  });

  it('the schemas refuse data that is not the stored shape', () => {
    const record = (type: string, data: unknown): LogRecord => ({ seq: 1, at: '2026-11-22T10:00:00.000Z', type, data, prev: '' });
    assert.deepEqual(schemaIssues([record('AlertReviewed', { alertId: 'a', from: 'open', to: 'closed', reason: 'r', principal: 'p', authentication: 'bearer' })], INSTANCE_EVENTS), [
      'seq 1 AlertReviewed: data.to: Invalid type: Expected ("open" | "in_review" | "dismissed") but received "closed"',
    ]);
    assert.match(schemaIssues([record('RuleEnabledChanged', { ruleId: 'r', enabled: true, extra: 1 })], INSTANCE_EVENTS)[0]!, /data\.extra/);
    assert.match(schemaIssues([record('SetupSessionConnected', { sessionId: 's' })], INSTANCE_EVENTS)[0]!, /no schema/);
  });
});

/** A mailer whose first delivery fails. */
function flakyMailer(): Mailer {
  let calls = 0;
  return {
    async send() {
      if (calls++ === 0) throw new Error('connection refused');
      return { messageId: `<m${calls}@authority.test>` };
    },
    close() {},
  };
}

function redeem(t: TestAuthority, deploymentId: string, key: TestKey, collectorId: string, token: string) {
  const payload = JSON.stringify({ deployment_id: deploymentId, collector_id: collectorId, enrollment_token: token, collector_public_key_spki_pem: newKey().pem });
  return t.json(`/v1/deployments/${deploymentId}/enrollments`, { body: { payload, signature: key.sign(signedBytes(ENROLLMENT_DOMAIN, payload)) } });
}

describe('stored events of the setup authority', () => {
  let t: TestAuthority;
  before(async () => { t = await startTestAuthority({}, flakyMailer()); });
  after(async () => { await t.close(); });

  it('every record of setup, reporting and recovery parses with the schema of its type, and the flows write every type', async () => {
    const alice = await t.signIn('alice');
    const p = await provision(t, alice);
    assert.equal(p.proven.status, 200);
    const bearer = p.sessionToken;
    assert.equal((await t.json(`/v1/setup-sessions/${p.sessionId}/bootstrap-key`, { body: { public_key: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl fleet', label: 'fleet' }, bearer })).status, 200);
    assert.equal((await t.json(`/v1/setup-sessions/${p.sessionId}/phases`, { body: { phase: 'discovery_completed', detail: 'three VMs' }, bearer })).status, 200);
    const collectors = p.proven.body.provisioning.collectors as Array<{ collector_id: string; enrollment_token: string }>;
    const web = collectors.find((c) => c.collector_id === 'vm-web')!.enrollment_token;
    assert.equal((await redeem(t, p.deploymentId, p.key, 'vm-web', web)).status, 201);
    assert.equal((await redeem(t, p.deploymentId, p.key, 'vm-web', web)).status, 401, 'single use');
    assert.equal((await sendSnapshot(t, p.deploymentId, p.key)).status, 202);
    // Silent past the heartbeat timeout: missing, a recovery token, a failed then a delivered notice.
    t.advance(902);
    await t.monitor.tick();
    await t.monitor.tick();
    const revealed = await t.json(`/v1/deployments/${p.deploymentId}/recovery-token/reveal`, { body: {}, browser: alice });
    assert.equal(revealed.status, 200);
    const claim = await t.json('/v1/recovery/claim', { body: { recovery_token: revealed.body.recovery_token, deployment_identity: { public_key_spki_pem: newKey().pem } } });
    assert.equal(claim.status, 201);
    const stuck = await provision(t, alice);
    assert.equal((await t.json(`/v1/setup-sessions/${stuck.sessionId}/abandon`, { body: { reason: 'the run died' }, bearer: stuck.sessionToken })).status, 200);
    assert.equal((await t.json('/v1/browser-sessions/current', { method: 'DELETE', browser: alice })).status, 204);

    const records = [...t.store.log.read(1)];
    assert.deepEqual(schemaIssues(records, AUTHORITY_EVENTS), []);
    assert.deepEqual(unwritten(records, AUTHORITY_EVENTS), [], 'the flows write every type the authority writes');
  });
});
