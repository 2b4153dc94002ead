import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { logExport, replay } from '../../src/cli/log-commands.js';
import { makeEvent, startTestInstance } from '../helpers/instance.js';

/** Arbitrary JSON values, nested a little in breadth and, through `nested`, up to 100 levels deep or 1,000 to 2,500 (past what msgpackr can write). */
const { json } = fc.letrec((tie) => ({
  json: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.string({ unit: 'binary', maxLength: 20 }), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean(), fc.constant(null),
    fc.array(tie('json'), { maxLength: 4 }),
    fc.dictionary(fc.string({ maxLength: 8 }), tie('json'), { maxKeys: 4 }),
  ),
}));
/** `leaf` wrapped `depth` times, built inside the property so that shrinking only shrinks numbers. */
function nest(leaf: unknown, depth: number, arrays: boolean): unknown {
  let v: unknown = leaf;
  for (let i = 0; i < depth; i++) v = arrays && i % 2 === 0 ? [v] : { k: v };
  return v;
}
const depths = fc.oneof(fc.nat(100), fc.integer({ min: 1000, max: 2500 }));

describe('arbitrary JSON through ingest, read, export and replay (property)', () => {
  it('never answers 5xx and never throws', async () => {
    const t = await startTestInstance({}, { builtinRules: true });
    try {
      let n = 0;
      await fc.assert(fc.asyncProperty(json, json, depths, fc.boolean(), async (value, leaf, depth, arrays) => {
        const deep = nest(leaf, depth, arrays);
        const id = `prop-${n++}`;
        const events = await t.request('/api/v1/events', { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify([makeEvent({ id, attributes: { value, deep } })]) });
        assert.ok([202, 400].includes(events.status), `events: ${events.status} ${await events.text()}`);
        for (const [route, body] of [
          ['/api/v1/ingest/linux-journal', [{ MESSAGE: 'x', __REALTIME_TIMESTAMP: '1795338000000000', _HOSTNAME: 'h', EXTRA: value, DEEP: deep }]],
          ['/api/v1/ingest/opentelemetry-log', { resourceLogs: [{ scopeLogs: [{ logRecords: [{ timeUnixNano: '1795338000000000000', body: { stringValue: 'x' }, attributes: [{ key: 'v', value }] }] }] }], extra: deep }],
          ['/api/v1/ingest/network-monitor?logType=conn', [{ ts: 1795338000, uid: id, 'id.orig_h': '10.0.0.1', 'id.resp_h': '10.0.0.2', extra: deep }]],
          ['/api/v1/rules', JSON.stringify(deep)],
        ] as const) {
          const res = await t.request(route, { method: 'POST', token: t.tokens.admin, body: typeof body === 'string' ? body : JSON.stringify(body) });
          assert.ok(res.status < 500, `${route}: ${res.status} ${await res.text()}`);
        }
        const read = await t.request('/api/v1/events?limit=50', { token: t.tokens.viewer });
        assert.equal(read.status, 200);
        await read.json();
      }), { numRuns: 40 });
      await t.restart(async (path) => {
        const lines: string[] = [];
        await logExport(path, 1, undefined, (l) => lines.push(l));
        for (const l of lines) JSON.parse(l);
        assert.equal((await replay(path, undefined)).records, lines.length);
      });
      assert.equal((await t.request('/api/v1/events?limit=1000', { token: t.tokens.viewer })).status, 200);
    } finally {
      await t.close();
    }
  });
});
