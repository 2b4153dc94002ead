import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openCredentialRegistry } from '../../src/auth/registry.js';
import { createIngestAdmission } from '../../src/http/admission.js';
import { createApp } from '../../src/http/app.js';
import { createRefusalLedger } from '../../src/http/refusals.js';
import { ROUTES } from '../../src/http/route-table.js';
import type { Reads } from '../../src/projections/models.js';
import { makeEvent, startTestInstance, type TestInstance } from '../helpers/instance.js';

describe('read handlers', () => {
  let t: TestInstance;
  before(async () => {
    t = await startTestInstance({}, { builtinRules: true });
    const res = await t.request('/api/v1/events', { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify([makeEvent({ id: 'read-side-1' })]) });
    assert.equal(res.status, 202);
  });
  after(async () => { await t.close(); });

  it('await readYourWrites before reading, and read only through deps.reads', async () => {
    let synced = false;
    const violations: string[] = [];
    let current = '';
    const reads = new Proxy(t.inst.reads, {
      get(target, prop, receiver) {
        if (!synced) violations.push(`${current} read ${String(prop)} before readYourWrites resolved`);
        const value = Reflect.get(target, prop, receiver) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as Reads;
    const pipeline = new Proxy(t.inst.pipeline, {
      get(target, prop, receiver) {
        if (prop === 'models') violations.push(`${current} read the writer's models`);
        return Reflect.get(target, prop, receiver) as unknown;
      },
    });
    const app = createApp({
      pipeline, reads,
      graph: (q) => {
        if (!synced) violations.push(`${current} queried the graph before readYourWrites resolved`);
        return t.inst.readSide.graph(q);
      },
      readYourWrites: async () => {
        await new Promise((resolve) => setImmediate(resolve));
        synced = true;
      },
      registry: openCredentialRegistry(t.credentialsFile, () => {}, 0),
      config: t.config,
      now: () => new Date('2026-11-22T10:00:00.000Z'),
      peerOf: () => undefined,
      log: () => {},
      refusals: createRefusalLedger(t.config.limits),
      admission: createIngestAdmission(t.config.limits),
    });
    const gets = ROUTES.filter((r) => r.method === 'get');
    assert.ok(gets.length >= 10);
    for (const r of gets) {
      current = `GET ${r.path}`;
      synced = false;
      const res = await app.request(r.path.replace(/\{[^}]+\}/g, 'unknown-id'), { headers: { authorization: `Bearer ${t.tokens.admin}` } });
      assert.ok(res.status === 200 || res.status === 404, `${current}: ${res.status} ${await res.text()}`);
    }
    assert.deepEqual(violations, []);
  });
});
