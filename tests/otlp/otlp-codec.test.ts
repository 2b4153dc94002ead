import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decodeExportRequest, decodeStatusProto, statusProto } from '../../src/normalizers/otlp/otlp-codec.js';
import { countLogRecords, splitExportRequest } from '../../src/normalizers/otlp/split-request.js';

describe('OTLP protobuf codec', () => {
  it('never throws on arbitrary bytes: a request or a reason', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 2000 }), (bytes) => {
      const r = decodeExportRequest(bytes);
      assert.ok(r.ok ? typeof r.request === 'object' : /^malformed protobuf/.test(r.error));
    }), { numRuns: 2000 });
  });

  it('answers nesting deep enough to exhaust the stack with a reason, without throwing', () => {
    // LogRecord.body = AnyValue{array_value: ArrayValue{values: [AnyValue{...}]}} nested 200 000 times, built inside out.
    const field = (tag: number, body: Buffer) => Buffer.concat([Buffer.from([tag]), varint(body.length), body]);
    let value = Buffer.alloc(0);
    for (let i = 0; i < 200_000; i++) value = field(0x2a, field(0x0a, value)); // AnyValue.array_value = 5, ArrayValue.values = 1
    const request = field(0x0a, field(0x12, field(0x12, field(0x2a, value)))); // resource_logs = 1, scope_logs = 2, log_records = 2, body = 5
    const r = decodeExportRequest(request);
    assert.equal(r.ok, false);
    assert.match(r.ok ? '' : r.error, /nested too deeply|malformed/);
  });

  it('round-trips google.rpc.Status', () => {
    assert.deepEqual(decodeStatusProto(statusProto(3, 'bad')), { code: 3, message: 'bad' });
  });

  it('splits a request into one request per LogRecord with its resource and scope', () => {
    const request = { resourceLogs: [{ resource: { attributes: [] }, scopeLogs: [{ scope: { name: 's' }, logRecords: [{ body: { stringValue: 'a' } }, { body: { stringValue: 'b' } }] }, { logRecords: [{}] }] }] };
    assert.equal(countLogRecords(request), 3);
    const parts = splitExportRequest(request);
    assert.ok(parts.ok);
    assert.deepEqual(parts.requests.map((p) => p.path), ['resourceLogs[0].scopeLogs[0].logRecords[0]', 'resourceLogs[0].scopeLogs[0].logRecords[1]', 'resourceLogs[0].scopeLogs[1].logRecords[0]']);
    assert.deepEqual(parts.requests[1]!.request, { resourceLogs: [{ resource: { attributes: [] }, scopeLogs: [{ scope: { name: 's' }, logRecords: [{ body: { stringValue: 'b' } }] }] }] });
    assert.deepEqual(splitExportRequest({ resourceLogs: 'x' }), { ok: false });
  });
});

function varint(n: number): Buffer {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  out.push(n);
  return Buffer.from(out);
}
