import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createMeshIdentity } from '../../src/auth/mesh-identity.js';
import type { MeshAllowlistEntry } from '../../src/auth/mesh-allowlist.js';
import type { WhoIsAnswer } from '../../src/auth/mesh-localapi.js';
import { startTestInstance } from '../helpers/instance.js';
import { ALICE_USER_ID, TAGGED_NODE_ID, WHOIS_TAGGED_NODE, WHOIS_USER_NODE } from '../helpers/localapi-stand-in.js';

/** A mesh identity over loopback whose daemon answers `answer()`. */
function meshOf(answer: () => WhoIsAnswer, allowlist: readonly MeshAllowlistEntry[] = [{ user: ALICE_USER_ID, roles: ['analyst'] }]) {
  return createMeshIdentity({
    peerRanges: ['127.0.0.0/8', '100.64.0.0/10'], whois: async () => answer(), allowlist: () => allowlist,
    nowMs: () => performance.now(), cacheMs: 0, cacheEntries: 16, maxInFlight: 16, onProblem: () => {},
  });
}

describe('the guard with mesh identity', () => {
  it('a mesh peer that the daemon does not name gets 401, never loopback admin, and no forwarding header reaches mesh identity', async () => {
    let answer: WhoIsAnswer = { kind: 'unknown' };
    const t = await startTestInstance({ server: { allowLoopbackAdmin: true } }, { mesh: meshOf(() => answer) });
    try {
      t.setPeer('127.0.0.1');
      const unknown = await t.request('/api/v1/me');
      assert.equal(unknown.status, 401);
      assert.equal(unknown.headers.get('www-authenticate'), 'Bearer');
      answer = { kind: 'found', body: WHOIS_USER_NODE };
      assert.equal((await (await t.request('/api/v1/me')).json() as { id: string }).id, `mesh:user:${ALICE_USER_ID}`);
      assert.equal((await t.request('/api/v1/me', { headers: { forwarded: 'for=192.0.2.1' } })).status, 401);
      assert.equal((await t.request('/api/v1/me', { token: t.tokens.viewer })).status, 200, 'a bearer token from a mesh peer');
      t.setPeer('::1');
      assert.equal((await (await t.request('/api/v1/me')).json() as { authentication: string }).authentication, 'loopback', 'a loopback peer outside the mesh ranges is still loopback admin');
    } finally {
      await t.close();
    }
  });

  it('checks the permission of the mesh roles: 403 past them', async () => {
    const t = await startTestInstance({}, { mesh: meshOf(() => ({ kind: 'found', body: WHOIS_TAGGED_NODE }), [{ node: TAGGED_NODE_ID, roles: ['viewer'] }]) });
    try {
      t.setPeer('100.64.0.9');
      assert.equal((await t.request('/api/v1/alerts')).status, 200);
      const denied = await t.request('/api/v1/rules', { method: 'POST', body: '{}' });
      assert.equal(denied.status, 403);
      assert.match((await denied.json() as { error: string }).error, /mesh:node:nQ7rS8tU9CNTRL lacks the rules:write permission/);
      t.setPeer('127.0.0.1');
      const events = await (await t.request('/api/v1/events?limit=100', { token: t.tokens.admin })).json() as { events: Array<{ actor: { user: string } | null; attributes: Record<string, unknown> }> };
      const access = events.events.filter((e) => e.actor?.user === `mesh:node:${TAGGED_NODE_ID}`);
      assert.equal(access.length, 2);
      assert.ok(access.every((e) => e.attributes['unapproved_device'] === true && e.attributes['authentication'] === 'mesh'), 'a tailnet address outside the approved ranges is marked for the rule');
    } finally {
      await t.close();
    }
  });

  it('throttles an address after failed mesh lookups as after any failed authentication', async () => {
    const t = await startTestInstance({ limits: { authFailures: { burst: 3, perMinute: 1 } } }, { mesh: meshOf(() => ({ kind: 'failed', reason: 'ENOENT' })) });
    try {
      t.setPeer('100.64.0.7');
      for (let i = 0; i < 3; i++) assert.equal((await t.request('/api/v1/me')).status, 401);
      assert.equal((await t.request('/api/v1/me')).status, 429);
    } finally {
      await t.close();
    }
  });

  it('property: whatever the daemon answers, never a 5xx and never a principal the allowlist does not name', async () => {
    let answer: WhoIsAnswer = { kind: 'unknown' };
    const allowlist: MeshAllowlistEntry[] = [{ user: ALICE_USER_ID, roles: ['analyst'] }, { node: TAGGED_NODE_ID, roles: ['viewer'] }];
    const t = await startTestInstance({}, { mesh: meshOf(() => answer, allowlist) });
    const named = new Map([[`mesh:user:${ALICE_USER_ID}`, ['analyst']], [`mesh:node:${TAGGED_NODE_ID}`, ['viewer']]]);
    // Mutations of the samples: a field changed, removed or retyped at any depth, plus arbitrary JSON and text.
    const mutate = (sample: string) => fc.tuple(fc.constantFrom(...['Node', 'UserProfile', 'StableID', 'ID', 'LoginName', 'DisplayName', 'Tags', 'CapMap']), fc.oneof(fc.jsonValue(), fc.constant(undefined)))
      .map(([key, value]) => JSON.stringify(JSON.parse(sample, (k, v: unknown) => (k === key ? value : v))));
    const body = fc.oneof(mutate(WHOIS_USER_NODE), mutate(WHOIS_TAGGED_NODE), fc.json(), fc.string(), fc.constantFrom(WHOIS_USER_NODE, WHOIS_TAGGED_NODE));
    const answers: fc.Arbitrary<WhoIsAnswer> = fc.oneof(body.map((b) => ({ kind: 'found' as const, body: b })), fc.constant({ kind: 'unknown' as const }), fc.constant({ kind: 'failed' as const, reason: 'x' }));
    try {
      t.setPeer('100.101.102.103');
      await fc.assert(fc.asyncProperty(answers, async (a) => {
        answer = a;
        const res = await t.request('/api/v1/me');
        assert.ok(res.status === 200 || res.status === 401, `status ${res.status}`);
        if (res.status === 200) {
          const p = await res.json() as { id: string; roles: string[]; authentication: string };
          assert.deepEqual(p.roles, named.get(p.id), p.id);
          assert.equal(p.authentication, 'mesh');
        }
      }), { numRuns: 300 });
    } finally {
      await t.close();
    }
  });
});
