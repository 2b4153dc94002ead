import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { makeEvent, startTestInstance, type TestInstance } from '../helpers/instance.js';

type Page = { entities: Array<{ key: string; kind: string; count: number; firstSeen: string; lastSeen: string }>; relationships: Array<{ from: string; to: string; type: string; count: number }>; kinds: Record<string, number>; relationshipTypes: Record<string, number>; nextCursor: string | null };

describe('GET /api/v1/graph', () => {
  let t: TestInstance;
  before(async () => {
    t = await startTestInstance();
    const events = [
      makeEvent({ id: 'g1', time: '2026-11-22T08:00:00Z', entityKeys: ['ip:10.0.0.1', 'ip:10.0.0.2'] }),
      makeEvent({ id: 'g2', time: '2026-11-22T08:05:00Z', entityKeys: ['ip:10.0.0.1', 'ip:10.0.0.2'] }),
      makeEvent({ id: 'g3', category: 'identity', class: 'authentication', actor: { user: 'alice' }, destinationEndpoint: { host: 'web-1' }, sourceEndpoint: { ip: '10.0.0.9' }, entityKeys: ['user:alice', 'host:web-1', 'ip:10.0.0.9'] }),
      makeEvent({ id: 'g4', class: 'dns_query', sourceEndpoint: { ip: '10.0.0.1' }, destinationEndpoint: { ip: '10.0.0.53', port: 53 }, entityKeys: ['ip:10.0.0.1', 'domain:example.org'] }),
    ];
    assert.equal((await t.request('/api/v1/events', { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify(events) })).status, 202);
  });
  after(async () => { await t.close(); });

  const get = async (q = '') => {
    const res = await t.request(`/api/v1/graph${q}`, { token: t.tokens.viewer });
    return { status: res.status, body: await res.json() as Page };
  };

  it('derives entities with kind, first and last seen and count', async () => {
    const { body } = await get('?kind=ip');
    const a = body.entities.find((e) => e.key === 'ip:10.0.0.1')!;
    assert.equal(a.kind, 'ip');
    assert.equal(a.count, 3);
    assert.equal(a.firstSeen, '2026-11-22T08:00:00Z');
    assert.ok(body.entities.every((e) => e.kind === 'ip'));
  });

  it('derives typed relationships and reports kinds and types', async () => {
    const { body } = await get('?entity=ip:10.0.0.1');
    const conn = body.relationships.find((r) => r.type === 'connected_to' && r.to === 'ip:10.0.0.2')!;
    assert.equal(conn.count, 2);
    assert.ok(body.relationships.some((r) => r.type === 'resolved' && r.to === 'domain:example.org'));
    assert.ok(body.entities.some((e) => e.key === 'domain:example.org'));
    const all = await get();
    assert.ok(all.body.relationshipTypes.authenticated_to! >= 1);
    assert.ok(all.body.kinds.user! >= 1);
    const alice = await get('?entity=user:alice');
    assert.deepEqual(alice.body.relationships.filter((r) => r.type === 'authenticated_to').map((r) => [r.from, r.to]), [['user:alice', 'host:web-1']]);
  });

  it('pages entities by key and 404s an unknown entity', async () => {
    const first = await get('?limit=2');
    assert.equal(first.body.entities.length, 2);
    const second = await get(`?limit=2&cursor=${first.body.nextCursor}`);
    assert.ok(second.body.entities[0]!.key > first.body.entities[1]!.key);
    assert.equal((await get('?entity=ip:192.0.2.1')).status, 404);
  });
});
