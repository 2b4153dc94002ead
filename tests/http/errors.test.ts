import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestInstance, type TestInstance } from '../helpers/instance.js';

describe('HTTP errors', () => {
  let t: TestInstance;
  before(async () => { t = await startTestInstance(); });
  after(async () => { await t.close(); });

  it('answers an unknown route with a 404 ErrorResponse and a request id', async () => {
    const res = await t.request('/api/v1/nothing-here', { token: t.tokens.admin });
    assert.equal(res.status, 404);
    assert.deepEqual(await res.json(), { error: 'no such route' });
    assert.match(res.headers.get('x-request-id') ?? '', /^[0-9a-f]{16}$/);
  });

  it('answers a wrong method with 405 and Allow', async () => {
    const res = await t.request('/api/v1/me', { method: 'POST', token: t.tokens.admin, body: '{}' });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('allow'), 'GET');
    assert.match((await res.json() as { error: string }).error, /not allowed/);
  });

  it('gives every response a distinct request id', async () => {
    const ids = new Set<string>();
    for (const path of ['/health', '/api/v1/me', '/nope']) ids.add((await t.request(path, { token: t.tokens.viewer })).headers.get('x-request-id')!);
    assert.equal(ids.size, 3);
  });

  it('refuses a non-JSON content type with 415', async () => {
    const res = await t.request('/api/v1/events', { method: 'POST', token: t.tokens.ingestor, body: 'x', headers: { 'content-type': 'text/plain' } });
    assert.equal(res.status, 415);
    assert.ok(typeof (await res.json() as { error: string }).error === 'string');
  });
});
