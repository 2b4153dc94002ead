import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestInstance } from '../helpers/instance.js';
import { decodeStatusProto } from '../../src/normalizers/otlp/otlp-codec.js';

describe('POST /api/v1/otlp/v1/logs under back-pressure', () => {
  it('answers 429 with Retry-After and a google.rpc.Status while the ingest queue is full', async () => {
    const t = await startTestInstance({ limits: { bodyBytes: 65_536, ingestQueueBytes: 1024 } });
    try {
      // A first export whose body is still arriving holds its share of the queue.
      let finish!: () => void;
      const held = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode('{"resourceLogs":['));
          finish = () => { controller.enqueue(new TextEncoder().encode(']}')); controller.close(); };
        },
      });
      const first = t.request('/api/v1/otlp/v1/logs', { method: 'POST', token: t.tokens.ingestor, body: held, duplex: 'half' } as RequestInit & { token: string });
      // Poll until the first request is admitted (the queue reports it), rather than sleeping.
      for (let i = 0; i < 500 && (await t.request('/metrics', { token: t.tokens.viewer }).then((r) => r.text())).match(/vigil_ingest_queue\{unit="requests"\} 1/) === null; i++) {
        await new Promise((r) => setTimeout(r, 10));
      }
      const proto = await t.request('/api/v1/otlp/v1/logs', { method: 'POST', token: t.tokens.ingestor, body: new Uint8Array(0), headers: { 'content-type': 'application/x-protobuf' } });
      assert.equal(proto.status, 429);
      assert.equal(proto.headers.get('retry-after'), '1');
      const status = decodeStatusProto(new Uint8Array(await proto.arrayBuffer()));
      assert.equal(status.code, 8, 'RESOURCE_EXHAUSTED');
      assert.match(status.message, /queue is full/);
      const json = await t.request('/api/v1/otlp/v1/logs', { method: 'POST', token: t.tokens.ingestor, body: '{}' });
      assert.equal(json.status, 429);
      assert.equal(json.headers.get('retry-after'), '1');
      assert.equal((await json.json() as { code: number }).code, 8);
      finish();
      assert.equal((await first).status, 200);
    } finally {
      await t.close();
    }
  });
});
