import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestInstance, makeEvent } from '../helpers/instance.js';

const json = (r: Response) => r.json() as Promise<Record<string, any>>;

test('POST /api/v1/search answers a page of events, then rows, each an audit record with a proof of what it cited', async () => {
  const t = await startTestInstance();
  try {
    const events = Array.from({ length: 30 }, (_, i) => makeEvent({
      id: `e-${i}`, time: `2026-11-22T09:${String(i).padStart(2, '0')}:00Z`,
      category: i % 3 === 0 ? 'identity' : 'network', class: i % 3 === 0 ? 'authentication' : 'network_connection',
      actor: { user: i % 2 === 0 ? 'alice' : 'bob' },
    }));
    const ingest = await t.request('/api/v1/events', { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify(events) });
    assert.equal(ingest.status, 202);
    const since = '2026-11-22T00:00:00.000Z';
    const until = '2026-11-22T10:00:00.000Z';
    const page = await t.request('/api/v1/search', { method: 'POST', token: t.tokens.viewer, body: JSON.stringify({ query: 'class:authentication', since, until, limit: 4 }) });
    const a = await json(page);
    assert.equal(page.status, 200, JSON.stringify(a));
    assert.equal(a.output, 'events');
    assert.deepEqual(a.events.map((e: any) => e.id), ['e-27', 'e-24', 'e-21', 'e-18']);
    assert.equal(a.complete, true);
    assert.ok(a.nextCursor);
    const next = await json(await t.request('/api/v1/search', { method: 'POST', token: t.tokens.viewer, body: JSON.stringify({ query: 'class:authentication', since, until, limit: 4, cursor: a.nextCursor }) }));
    assert.deepEqual(next.events.map((e: any) => e.id), ['e-15', 'e-12', 'e-9', 'e-6']);
    const rows = await json(await t.request('/api/v1/search', { method: 'POST', token: t.tokens.viewer, body: JSON.stringify({ query: 'category:network | stats count() by actor.user', since, until }) }));
    assert.equal(rows.output, 'rows');
    assert.deepEqual(rows.columns, ['actor.user', 'count']);
    assert.deepEqual(Object.fromEntries(rows.rows), { alice: 10, bob: 10 });

    // Each search is in the audit trail with what it asked and answered.
    const audit = await json(await t.request('/api/v1/audit?route=/api/v1/search', { token: t.tokens.admin }));
    const asked = audit.entries.map((e: any) => e.search);
    assert.equal(asked.length, 3);
    assert.deepEqual(asked[2], { query: 'class:authentication', since, until, output: 'events', rows: 4, scanned: 4, complete: true });
    assert.equal(asked[0].output, 'rows');
    assert.equal(audit.entries[2].principal, 'viewer-user');

    await t.transparency.make();
    const proof = await t.request(`/api/v1/search/${a.id}/proof`, { token: t.tokens.viewer });
    const p = await json(proof);
    assert.equal(proof.status, 200, JSON.stringify(p));
    assert.equal(p.search.query, 'class:authentication');
    assert.equal(p.records.length, 1);
    assert.equal(p.pending.length, 0);
    assert.match(p.records[0].record, /"raw":"/);
    assert.equal(p.nextFrom, null);
    const past = await json(await t.request(`/api/v1/search/${a.id}/proof?from=1&limit=100`, { token: t.tokens.viewer }));
    assert.deepEqual([past.records.length, past.nextFrom], [0, null]);
    assert.equal((await t.request(`/api/v1/search/${a.id}/proof?limit=101`, { token: t.tokens.viewer })).status, 400);
    assert.equal((await t.request('/api/v1/search/99999/proof', { token: t.tokens.viewer })).status, 404);
  } finally {
    await t.close();
  }
});
