import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestInstance, type TestInstance } from '../helpers/instance.js';
import { alertRaised } from '../helpers/event-fixtures.js';

type Timeline = Array<{ kind: string; principal: string; authentication: string; from?: string; to?: string; reason?: string; disposition?: string; text?: string; bulk?: boolean }>;
type Detail = { id: string; status: string; assignee?: string; disposition?: string; reviewHistory: Array<{ principal: string; to: string; bulk?: boolean }>; timeline: Timeline };

describe('alert assignment, notes and bulk review over HTTP', () => {
  let t: TestInstance;
  before(async () => {
    t = await startTestInstance();
    // 150 alerts of one rule on ten systems, and 5 of another: what a queue holds after a noisy morning.
    const raised = [
      ...Array.from({ length: 150 }, (_, i) => alertRaised({ alertId: `alr_n${i}`, ruleId: 'noisy', groupKey: `g${i}`, severity: 3, affectedSystems: [`host:web-${i % 10}`], lastSeen: `2026-11-22T09:${String(i % 60).padStart(2, '0')}:00.000Z` })),
      ...Array.from({ length: 5 }, (_, i) => alertRaised({ alertId: `alr_q${i}`, ruleId: 'quiet', groupKey: `q${i}`, severity: 9 })),
    ];
    await t.inst.writer.record(raised, { now: '2026-11-22T09:59:00.000Z' });
  });
  after(async () => { await t.close(); });

  const send = (method: string, path: string, body: unknown, token = t.tokens.analyst) => t.request(path, { method, token, body: JSON.stringify(body) });
  const detail = async (id: string) => (await (await t.request(`/api/v1/alerts/${id}`, { token: t.tokens.viewer })).json()) as Detail;

  it('assigns an alert and lists it by assignee; the timeline says who assigned it and how they authenticated', async () => {
    const res = await send('PUT', '/api/v1/alerts/alr_q0/assignee', { assignee: 'analyst-user', reason: 'mine' });
    assert.equal(res.status, 200, await res.clone().text());
    assert.deepEqual(await res.json(), { id: 'alr_q0', assignee: 'analyst-user' });
    const list = (await (await t.request('/api/v1/alerts?assignee=analyst-user', { token: t.tokens.viewer })).json()) as { alerts: Array<{ id: string; assignee: string }> };
    assert.deepEqual(list.alerts.map((a) => [a.id, a.assignee]), [['alr_q0', 'analyst-user']]);
    const unassigned = (await (await t.request('/api/v1/alerts?unassigned=true&limit=1000', { token: t.tokens.viewer })).json()) as { alerts: Array<{ id: string }> };
    assert.equal(unassigned.alerts.length, 154);
    assert.ok(!unassigned.alerts.some((a) => a.id === 'alr_q0'));
    assert.equal((await t.request('/api/v1/alerts?unassigned=yes', { token: t.tokens.viewer })).status, 400);
    const a = await detail('alr_q0');
    assert.equal(a.assignee, 'analyst-user');
    assert.deepEqual(a.timeline.map((e) => [e.kind, e.principal, e.authentication, e.to, e.reason]), [['assignment', 'analyst-user', 'bearer', 'analyst-user', 'mine']]);
    assert.equal((await send('PUT', '/api/v1/alerts/alr_q0/assignee', { assignee: null })).status, 200);
    assert.equal((await detail('alr_q0')).assignee, undefined);
  });

  it('adds notes that appear in the timeline with their author', async () => {
    const res = await send('POST', '/api/v1/alerts/alr_q1/notes', { text: '  called the owner of web-1  ' });
    assert.equal(res.status, 201, await res.clone().text());
    assert.deepEqual(await res.json(), { alertId: 'alr_q1', noteId: 'n1' });
    const a = await detail('alr_q1');
    assert.deepEqual(a.timeline.map((e) => [e.kind, e.principal, e.text]), [['note', 'analyst-user', 'called the owner of web-1']]);
    assert.equal((await send('POST', '/api/v1/alerts/alr_q1/notes', { text: '   ' })).status, 400);
    assert.equal((await send('POST', '/api/v1/alerts/alr_nope/notes', { text: 'x' })).status, 404);
  });

  it('reviews all 150 alerts that match a filter in one action; each alert shows its own entry with the reviewer', async () => {
    const head = t.inst.log.head().seq;
    const res = await send('POST', '/api/v1/alerts/reviews', { filter: { rule: 'noisy', status: 'open' }, status: 'dismissed', disposition: 'false_positive', reason: 'vulnerability scanner' });
    assert.equal(res.status, 200, await res.clone().text());
    const body = await res.json() as { reviewed: number; alertIds: string[] };
    assert.equal(body.reviewed, 150, 'every match, not one page of 100');
    const written = [...t.inst.log.read(head + 1)].map((r) => r.type);
    assert.equal(written.filter((type) => type === 'AlertsBulkReviewed').length, 1, 'one record for the whole review');
    assert.deepEqual(body.alertIds.slice().sort(), Array.from({ length: 150 }, (_, i) => `alr_n${i}`).sort());
    for (const id of body.alertIds) {
      const a = await detail(id);
      assert.equal(a.status, 'dismissed');
      assert.equal(a.disposition, 'false_positive');
      const last = a.timeline.at(-1)!;
      assert.deepEqual([last.kind, last.principal, last.authentication, last.from, last.to, last.reason, last.bulk], ['review', 'analyst-user', 'bearer', 'open', 'dismissed', 'vulnerability scanner', true]);
    }
    assert.equal((await detail('alr_q2')).status, 'open', 'an alert of another rule is untouched');
  });

  it('reviews alerts named by id, with a disposition on a single review too', async () => {
    const res = await send('POST', '/api/v1/alerts/reviews', { alertIds: ['alr_q3', 'alr_q4'], status: 'in_review', reason: 'looking' });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal((await res.json() as { reviewed: number }).reviewed, 2);
    assert.equal((await send('PATCH', '/api/v1/alerts/alr_q3', { status: 'dismissed', reason: 'admin', disposition: 'benign' })).status, 200);
    assert.equal((await detail('alr_q3')).disposition, 'benign');
  });

  it('refuses a selection that is both or neither, unknown ids, and a disposition it does not know', async () => {
    assert.equal((await send('POST', '/api/v1/alerts/reviews', { status: 'dismissed', reason: 'x' })).status, 400);
    assert.equal((await send('POST', '/api/v1/alerts/reviews', { alertIds: ['alr_q2'], filter: {}, status: 'dismissed', reason: 'x' })).status, 400);
    const unknown = await send('POST', '/api/v1/alerts/reviews', { alertIds: ['alr_q2', 'alr_zz'], status: 'dismissed', reason: 'x' });
    assert.equal(unknown.status, 400);
    assert.deepEqual((await unknown.json() as { issues: string[] }).issues, ['alertIds: alr_zz does not exist']);
    assert.equal((await send('POST', '/api/v1/alerts/reviews', { alertIds: ['alr_q2'], status: 'dismissed', reason: 'x', disposition: 'maybe' })).status, 400);
  });

  it('sorts the queue by severity, and refuses an order it does not know', async () => {
    const res = await t.request('/api/v1/alerts?sort=severity&limit=5', { token: t.tokens.viewer });
    assert.equal(res.status, 200);
    const page = await res.json() as { alerts: Array<{ severity: number }>; nextCursor: string };
    assert.deepEqual(page.alerts.map((a) => a.severity), [9, 9, 9, 9, 9]);
    const next = await (await t.request(`/api/v1/alerts?sort=severity&limit=5&cursor=${page.nextCursor}`, { token: t.tokens.viewer })).json() as { alerts: Array<{ severity: number }> };
    assert.deepEqual(next.alerts.map((a) => a.severity), [3, 3, 3, 3, 3]);
    assert.equal((await t.request('/api/v1/alerts?sort=title', { token: t.tokens.viewer })).status, 400);
  });

  it('refuses review, assignment and notes to a viewer', async () => {
    assert.equal((await send('POST', '/api/v1/alerts/reviews', { alertIds: ['alr_q2'], status: 'dismissed', reason: 'x' }, t.tokens.viewer)).status, 403);
    assert.equal((await send('PUT', '/api/v1/alerts/alr_q2/assignee', { assignee: 'x' }, t.tokens.viewer)).status, 403);
    assert.equal((await send('POST', '/api/v1/alerts/alr_q2/notes', { text: 'x' }, t.tokens.viewer)).status, 403);
  });

  it('keeps an often reviewed alert\'s detail bounded, and pages its whole timeline oldest first', async () => {
    for (let i = 0; i < 230; i++) {
      const res = await send('PATCH', '/api/v1/alerts/alr_q2', { status: i % 2 === 0 ? 'in_review' : 'open', reason: `toggle ${i}` });
      assert.equal(res.status, 200);
    }
    assert.equal((await send('POST', '/api/v1/alerts/alr_q2/notes', { text: 'last word' })).status, 201);
    const a = await detail('alr_q2') as Detail & { historyTotals: Record<string, number>; notes: unknown[] };
    assert.deepEqual(a.historyTotals, { reviews: 230, assignments: 0, notes: 1, timeline: 231 });
    assert.equal(a.reviewHistory.length, 200);
    assert.equal(a.timeline.length, 200);
    assert.deepEqual([a.timeline[0]!.reason, a.timeline.at(-2)!.reason, a.timeline.at(-1)!.text], ['toggle 31', 'toggle 229', 'last word'], 'the newest entries');

    const pages: Timeline[] = [];
    let cursor: string | null = null;
    do {
      const res = await t.request(`/api/v1/alerts/alr_q2/timeline?limit=100${cursor ? `&cursor=${cursor}` : ''}`, { token: t.tokens.viewer });
      assert.equal(res.status, 200, await res.clone().text());
      const page = await res.json() as { alertId: string; entries: Timeline; nextCursor: string | null };
      assert.equal(page.alertId, 'alr_q2');
      pages.push(page.entries);
      cursor = page.nextCursor;
    } while (cursor !== null);
    assert.deepEqual(pages.map((p) => p.length), [100, 100, 31]);
    const all = pages.flat();
    assert.deepEqual(all.slice(0, 230).map((e) => e.reason), Array.from({ length: 230 }, (_, i) => `toggle ${i}`));
    assert.equal(all[230]!.text, 'last word');

    assert.equal((await t.request('/api/v1/alerts/alr_q2/timeline?cursor=bogus', { token: t.tokens.viewer })).status, 400);
    assert.equal((await t.request('/api/v1/alerts/alr_nope/timeline', { token: t.tokens.viewer })).status, 404);
    assert.equal((await t.request('/api/v1/alerts/alr_q2/timeline', { token: t.tokens.ingestor })).status, 403);
  });
});

describe('bulk review past its bound', () => {
  let t: TestInstance;
  before(async () => {
    t = await startTestInstance();
    const many = Array.from({ length: 10_001 }, (_, i) => alertRaised({ alertId: `alr_${i}`, groupKey: `g${i}` }));
    for (let i = 0; i < many.length; i += 2000) await t.inst.writer.record(many.slice(i, i + 2000), { now: '2026-11-22T09:59:00.000Z' });
  });
  after(async () => { await t.close(); });

  it('answers 413 with how many matched and the bound, and changes nothing', async () => {
    const head = t.inst.log.head().seq;
    const res = await t.request('/api/v1/alerts/reviews', { method: 'POST', token: t.tokens.analyst, body: JSON.stringify({ filter: {}, status: 'dismissed', reason: 'all of it' }) });
    assert.equal(res.status, 413);
    const body = await res.json() as { error: string; matched: number; limit: number };
    assert.match(body.error, /matches 10001 alerts.*at most 10000.*narrow the filter/);
    assert.deepEqual([body.matched, body.limit], [10_001, 10_000]);
    assert.ok(![...t.inst.log.read(head + 1)].some((r) => r.type === 'AlertsBulkReviewed'));
  });
});
