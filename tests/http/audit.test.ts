import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startTestInstance, type TestInstance } from '../helpers/instance.js';
import { hashToken } from '../../src/auth/tokens.js';

type Audit = { principal: string | null; authentication: string; method: string; route: string; status: number; sourceAddress: string; requestId: string; durationMs: number };

describe('access events and the audit trail', () => {
  let t: TestInstance;
  before(async () => {
    t = await startTestInstance({ server: { approvedSourceAddresses: ['10.1.0.0/16'], trustedProxies: ['10.9.9.9/32'] } });
  });
  after(async () => { await t.close(); });

  const records = (type: string) => [...t.inst.log.read(1)].filter((r) => r.type === type);

  it('records an access event and an audit record for each request, with the principal and outcome', async () => {
    t.setPeer('10.1.2.3');
    const res = await t.request('/api/v1/me', { token: t.tokens.viewer });
    const rid = res.headers.get('x-request-id')!;
    const audit = records('ApiRequestAudited').map((r) => r.data as Audit).find((a) => a.requestId === rid)!;
    assert.deepEqual({ ...audit, durationMs: 0 }, { requestId: rid, principal: 'viewer-user', authentication: 'bearer', method: 'GET', route: '/api/v1/me', status: 200, durationMs: 0, sourceAddress: '10.1.2.3', credential: hashToken(t.tokens.viewer).slice(0, 12) });
    const access = records('AccessRecorded').map((r) => (r.data as { event: { id: string; category: string; class: string; activity: string; outcome: string; actor: { user: string }; sourceEndpoint: { ip: string }; attributes: Record<string, unknown> } }).event)
      .find((e) => e.id === `vigil:api:${rid}`)!;
    assert.equal(access.category, 'identity');
    assert.equal(access.class, 'api_access');
    assert.equal(access.activity, 'read_principal');
    assert.equal(access.outcome, 'success');
    assert.equal(access.actor.user, 'viewer-user');
    assert.equal(access.attributes['credential'], hashToken(t.tokens.viewer).slice(0, 12), 'the access event names the credential used');
    assert.equal(access.sourceEndpoint.ip, '10.1.2.3');
    assert.equal(access.attributes.unapproved_device, false);
  });

  it('marks a source outside approvedSourceAddresses as unapproved_device', async () => {
    t.setPeer('192.0.2.44');
    const rid = (await t.request('/api/v1/me', { token: t.tokens.viewer })).headers.get('x-request-id');
    const access = records('AccessRecorded').map((r) => (r.data as { event: { id: string; attributes: Record<string, unknown> } }).event).find((e) => e.id === `vigil:api:${rid}`)!;
    assert.equal(access.attributes.unapproved_device, true);
  });

  it('believes X-Forwarded-For only from a trusted proxy', async () => {
    t.setPeer('10.9.9.9');
    let rid = (await t.request('/api/v1/me', { token: t.tokens.viewer, headers: { 'x-forwarded-for': '198.51.100.1, 10.1.5.5' } })).headers.get('x-request-id');
    assert.equal(records('ApiRequestAudited').map((r) => r.data as Audit).find((a) => a.requestId === rid)!.sourceAddress, '10.1.5.5');
    t.setPeer('10.1.7.7');
    rid = (await t.request('/api/v1/me', { token: t.tokens.viewer, headers: { 'x-forwarded-for': '10.1.5.5' } })).headers.get('x-request-id');
    assert.equal(records('ApiRequestAudited').map((r) => r.data as Audit).find((a) => a.requestId === rid)!.sourceAddress, '10.1.7.7');
  });

  it('records failed authentications with the source address and no token material', async () => {
    t.setPeer('203.0.113.7');
    const secret = 'vgl_ThisIsNotARealTokenButLooksLikeOne0000000';
    const res = await t.request('/api/v1/events', { token: secret });
    assert.equal(res.status, 401);
    const rid = res.headers.get('x-request-id');
    const audit = records('ApiRequestAudited').map((r) => r.data as Audit).find((a) => a.requestId === rid)!;
    assert.deepEqual([audit.status, audit.principal, audit.authentication, audit.sourceAddress], [401, null, 'none', '203.0.113.7']);
  });

  it('lists the audit trail for admins with filters and cursor paging', async () => {
    t.setPeer('10.1.0.1');
    for (let i = 0; i < 5; i++) await t.request('/api/v1/graph', { token: t.tokens.analyst });
    const page1 = await (await t.request('/api/v1/audit?principal=analyst-user&limit=3', { token: t.tokens.admin })).json() as { entries: Audit[]; nextCursor: string };
    assert.equal(page1.entries.length, 3);
    assert.ok(page1.entries.every((e) => e.principal === 'analyst-user' && e.route === '/api/v1/graph'));
    const page2 = await (await t.request(`/api/v1/audit?principal=analyst-user&limit=3&cursor=${page1.nextCursor}`, { token: t.tokens.admin })).json() as { entries: Audit[]; nextCursor: string | null };
    assert.equal(page2.entries.length, 2);
    assert.equal(page2.nextCursor, null);
    const failures = await (await t.request('/api/v1/audit?status=401', { token: t.tokens.admin })).json() as { entries: Audit[] };
    assert.ok(failures.entries.length >= 1 && failures.entries.every((e) => e.status === 401));
  });

  it('never stores a token in the log, the indexes or any store file', async () => {
    for (const token of Object.values(t.tokens)) await t.request('/api/v1/me', { token });
    await t.inst.runtime.checkpoint();
    const files: string[] = [];
    const walk = (d: string) => { for (const f of readdirSync(d)) { const p = join(d, f); if (statSync(p).isDirectory()) walk(p); else files.push(p); } };
    walk(t.config.storage.path);
    for (const file of files) {
      const bytes = readFileSync(file);
      for (const token of Object.values(t.tokens)) {
        assert.equal(bytes.includes(Buffer.from(token)), false, `token found in ${file}`);
        assert.equal(bytes.includes(Buffer.from(token.slice(4, 24))), false, `token fragment found in ${file}`);
      }
    }
    const exported = JSON.stringify([...t.inst.log.read(1)]);
    for (const token of Object.values(t.tokens)) assert.equal(exported.includes(token.slice(4, 24)), false);
  });
});
