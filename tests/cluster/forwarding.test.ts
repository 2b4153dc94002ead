import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { Packr } from 'msgpackr';
import { readForwarded } from '../../src/cli/cluster/forwarding.js';

const packr = new Packr({ useRecords: false, mapsAsObjects: true });
const ctx = { now: '2026-11-23T12:00:00.000Z', actor: { id: 'ana', authentication: 'token' } };

describe('forwarded messages on the leader', () => {
  it('accepts a forwarded write as a follower sends it', () => {
    const r = readForwarded(packr.pack({ kind: 'http', method: 'POST', path: '/api/v1/events', headers: [['authorization', 'Bearer x'], ['content-type', 'application/json']], body: new Uint8Array([91, 93]), peer: '10.0.0.7' }));
    assert.ok(r.ok, r.ok ? '' : r.error);
    assert.equal(r.value.kind, 'http');
  });

  it('refuses records of any type but access, audit and refusal summaries, and malformed writes', () => {
    const review = readForwarded(packr.pack({ kind: 'records', facts: [{ type: 'AlertReviewed', data: { alertId: 'a', from: 'open', to: 'dismissed', reason: 'x', principal: 'mallory', authentication: 'token' } }], ctx }));
    assert.equal(review.ok, false);
    assert.equal(readForwarded(packr.pack({ kind: 'http', method: 'POST', path: 'api/v1/events', headers: [] })).ok, false, 'a path must start with /');
    assert.equal(readForwarded(packr.pack({ kind: 'http', method: 'POST', path: '/', headers: [], admin: true })).ok, false, 'no unknown fields');
    assert.equal(readForwarded(packr.pack({ kind: 'records', facts: [], ctx: { now: 'yesterday' } })).ok, false);
    assert.equal(readForwarded(new Uint8Array([0xc1])).ok, false, 'not msgpack');
  });

  it('accepts a follower\'s syslog batch as its listener took it, and nothing that claims another actor or passes the bounds', () => {
    const record = { message: '<13>1 - web-01 app - - - hello', receivedAt: '2026-11-23T12:00:00.000Z', peer: '10.0.0.7', listener: 'tcp', transport: 'tcp' };
    const syslogCtx = { now: '2026-11-23T12:00:00.000Z', actor: { id: 'syslog:tcp', authentication: 'syslog-listener' } };
    const ok = readForwarded(packr.pack({ kind: 'syslog', batch: [{ record }, { record: { ...record, length: 99_999 }, rejection: { reason: 'too_large', error: 'frame too large' } }], ctx: syslogCtx }));
    assert.ok(ok.ok, ok.ok ? '' : ok.error);
    assert.equal(readForwarded(packr.pack({ kind: 'syslog', batch: [{ record }], ctx })).ok, false, 'only a listener\'s actor');
    assert.equal(readForwarded(packr.pack({ kind: 'syslog', batch: [], ctx: syslogCtx })).ok, false, 'not empty');
    assert.equal(readForwarded(packr.pack({ kind: 'syslog', batch: Array.from({ length: 2001 }, () => ({ record })), ctx: syslogCtx })).ok, false, 'at most one intake batch');
    assert.equal(readForwarded(packr.pack({ kind: 'syslog', batch: [{ record: { ...record, events: [] } }], ctx: syslogCtx })).ok, false, 'the record as taken, nothing more');
  });

  it('never throws, whatever the bytes', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 256 }), (bytes) => { readForwarded(bytes); }), { numRuns: 500 });
    fc.assert(fc.property(fc.anything(), (value) => { readForwarded(packr.pack(value)); }), { numRuns: 300 });
  });
});
