import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestInstance } from '../helpers/instance.js';
import { alertRaised } from '../helpers/event-fixtures.js';

describe('console bulk assign', () => {
  it('names each alert once: a repeated id records one assignment, not two', async () => {
    const t = await startTestInstance();
    try {
      await t.inst.writer.record([alertRaised({ alertId: 'alr_1' })], { now: '2026-11-22T09:59:00.000Z' });
      const page = await (await t.request('/alerts', { token: t.tokens.analyst })).text();
      const csrf = /name="_csrf" value="([^"]+)"/.exec(page)?.[1];
      assert.ok(csrf, 'csrf token on the queue page');
      const form = new URLSearchParams([['ids', 'alr_1'], ['ids', 'alr_1'], ['assignee', 'bob'], ['_csrf', csrf!]]);
      const res = await t.request('/alerts/assign', { method: 'POST', token: t.tokens.analyst, body: form.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      assert.equal(res.status, 303);
      const detail = await (await t.request('/api/v1/alerts/alr_1', { token: t.tokens.viewer })).json() as { assignmentHistory: unknown[] };
      assert.equal(detail.assignmentHistory.length, 1);
    } finally { await t.close(); }
  });
  it('takes an assignee only as the API does: no control characters', async () => {
    const t = await startTestInstance();
    try {
      await t.inst.writer.record([alertRaised({ alertId: 'alr_1' })], { now: '2026-11-22T09:59:00.000Z' });
      const evil = 'bob\u001b[2J\u0007';
      const api = await t.request('/api/v1/alerts/alr_1/assignee', { method: 'PUT', token: t.tokens.analyst, body: JSON.stringify({ assignee: evil }) });
      const page = await (await t.request('/alerts/alr_1', { token: t.tokens.analyst })).text();
      const csrf = /name="_csrf" value="([^"]+)"/.exec(page)?.[1]!;
      const form = new URLSearchParams([['assignee', evil], ['_csrf', csrf]]);
      const res = await t.request('/alerts/alr_1/assign', { method: 'POST', token: t.tokens.analyst, body: form.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      const detail = await (await t.request('/api/v1/alerts/alr_1', { token: t.tokens.viewer })).json() as { assignee?: string };
      assert.equal(api.status, 400);
      assert.equal(res.status, 400);
      assert.equal(detail.assignee, undefined);
    } finally { await t.close(); }
  });
});
