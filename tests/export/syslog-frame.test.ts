import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { syslogFrame } from '../../src/services/export/syslog-sender.js';
import type { ExportItem } from '../../src/services/export/items.js';

/** The message of one octet-counted frame and the JSON item after its BOM. */
function parse(frame: Buffer): { header: string; item: unknown } {
  const space = frame.indexOf(0x20);
  const length = Number(frame.subarray(0, space).toString());
  const msg = frame.subarray(space + 1);
  assert.equal(msg.length, length, 'the octet count is the message length');
  const bom = msg.indexOf(Buffer.from([0xef, 0xbb, 0xbf]));
  return { header: msg.subarray(0, bom).toString('utf8'), item: JSON.parse(msg.subarray(bom + 3).toString('utf8')) };
}

const reviewed: ExportItem = {
  id: 'vigil.log/8d1c/1234/0',
  seq: 1234,
  type: 'alert.reviewed',
  at: '2026-11-23T09:12:03.117Z',
  actor: { id: 'alice', authentication: 'bearer' },
  data: { alertId: 'al_1', from: 'open', to: 'dismissed', reason: 'known scanner', level: 'high' },
};

describe('syslogFrame', () => {
  it('carries the whole item as docs/export.md describes it, seq and at included, as the webhook sends it', () => {
    const { header, item } = parse(syslogFrame(reviewed, 'vigil.log/8d1c', 'host-1'));
    assert.deepEqual(item, reviewed);
    assert.deepEqual(Object.keys(item as object), ['id', 'seq', 'type', 'at', 'actor', 'data']);
    assert.match(header, /^<107>1 2026-11-23T09:12:03\.117Z host-1 vigil - alert\.reviewed \[vigil@32473 id="vigil\.log\/8d1c\/1234\/0" seq="1234" origin="vigil\.log\/8d1c"\] $/);
  });

  it('leaves actor out when no principal caused the item, and keeps seq and at', () => {
    const { actor: _actor, ...raised } = { ...reviewed, type: 'alert.raised' };
    const { item } = parse(syslogFrame(raised, 'vigil.log/8d1c', 'host-1'));
    assert.deepEqual(item, raised);
    assert.deepEqual(Object.keys(item as object), ['id', 'seq', 'type', 'at', 'data']);
  });
});
