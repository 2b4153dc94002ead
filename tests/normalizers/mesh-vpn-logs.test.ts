import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import * as v from 'valibot';
import { type NormalizedEvent, NormalizedEventSchema } from '../../src/events/normalized-event.js';
import { meshVpnLogs } from '../../src/normalizers/mesh-vpn-logs.js';
import { deterministicEventId, rawDigest, rawReference } from '../../src/normalizers/record-id.js';
import type { NormalizeContext } from '../../src/normalizers/types.js';
import { fixturePath } from '../helpers/paths.js';

const INGESTED_AT = '2024-05-14T07:00:00Z';
const NETWORK: NormalizeContext = { ingestedAt: INGESTED_AT, logType: 'network', meshnet: 'example.com' };
const CONFIGURATION: NormalizeContext = { ingestedAt: INGESTED_AT, logType: 'configuration', meshnet: 'example.com' };
type Json = Record<string, unknown>;

function sampleText(name: string): string {
  return readFileSync(fixturePath('mesh-vpn-logs', name), 'utf8');
}
const sample = (name: string): Json => JSON.parse(sampleText(name)) as Json;
const lines = (name: string): Json[] => sampleText(name).split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as Json);
const flowLines = () => lines('network-flow-records-constructed.jsonl');
const flowResponse = () => sample('network-flow-api-response-constructed.json');
const auditResponse = () => sample('audit-api-response-constructed.json');
const auditStream = () => lines('audit-stream-panther-tests.jsonl');

function assertValid(event: unknown): void {
  const parsed = v.safeParse(NormalizedEventSchema, event);
  assert.ok(parsed.success, JSON.stringify(parsed.issues?.map((i) => `${i.path?.map((p) => p.key).join('.')}: ${i.message}`)));
}
function eventsOf(record: unknown, ctx: NormalizeContext): NormalizedEvent[] {
  const result = meshVpnLogs.normalize(record, ctx);
  assert.ok(result.ok, result.ok ? '' : result.error);
  result.events.forEach(assertValid);
  return result.events;
}
function onlyEvent(record: unknown, ctx: NormalizeContext): NormalizedEvent {
  const events = eventsOf(record, ctx);
  assert.equal(events.length, 1);
  return events[0]!;
}
function refusal(record: unknown, ctx: NormalizeContext): string {
  const result = meshVpnLogs.normalize(record, ctx);
  assert.equal(result.ok, false, 'expected the record to be refused');
  return result.ok ? '' : result.error;
}
const TRAFFIC_FIELDS = ['virtualTraffic', 'subnetTraffic', 'exitTraffic', 'physicalTraffic'];
const entryCount = (record: Json) => TRAFFIC_FIELDS.reduce((n, f) => n + ((record[f] as unknown[] | undefined)?.length ?? 0), 0);
/** The parts of a flow event that do not depend on how the raw record was delivered. */
const flowView = (e: NormalizedEvent) => ({ ...e, id: undefined, rawReference: undefined, source: { ...e.source, recordId: undefined } });

describe('meshVpnLogs samples', () => {
  it('accepts every sample file with valid events', () => {
    for (const record of flowLines()) assert.equal(eventsOf(record, NETWORK).length, entryCount(record));
    assert.equal(eventsOf(flowResponse(), NETWORK).length, (flowResponse().logs as Json[]).reduce((n, r) => n + entryCount(r), 0));
    assert.equal(eventsOf(auditResponse(), CONFIGURATION).length, 5);
    for (const record of auditStream()) assert.equal(eventsOf(record, CONFIGURATION).length, 1);
  });

  it('declares its log types', () => {
    assert.equal(meshVpnLogs.name, 'mesh-vpn-logs');
    assert.deepEqual(meshVpnLogs.logTypes, ['network', 'configuration']);
  });
});

describe('meshVpnLogs network flow logs', () => {
  it('gives one event per traffic entry with the reporting node, ports and counts', () => {
    const events = eventsOf(flowLines()[0], NETWORK);
    assert.deepEqual(events.map((e) => e.activity), ['virtual', 'virtual', 'virtual', 'virtual', 'physical', 'physical']);
    const ssh = events[0]!;
    assert.equal(ssh.class, 'network_flow');
    assert.equal(ssh.category, 'network');
    assert.equal(ssh.source.instance, 'network');
    assert.equal(ssh.time, '2024-05-14T06:45:04.516170820Z');
    assert.deepEqual(ssh.sourceEndpoint, { ip: '100.101.102.103', port: 51234, node: 'nQ7rS8tU9CNTRL' });
    assert.deepEqual(ssh.destinationEndpoint, { ip: '100.64.0.7', port: 22 });
    assert.deepEqual(ssh.entityKeys, ['meshnet:example.com', 'node:nQ7rS8tU9CNTRL', 'ip:100.101.102.103', 'ip:100.64.0.7']);
    assert.deepEqual(
      [ssh.attributes.proto, ssh.attributes.txPkts, ssh.attributes.txBytes, ssh.attributes.rxPkts, ssh.attributes.rxBytes],
      [6, 41, 6240, 38, 9120],
    );
    assert.equal(ssh.attributes.nodeId, 'nQ7rS8tU9CNTRL');
    assert.equal(ssh.attributes.end, '2024-05-14T06:45:09.516217296Z');
  });

  it('parses bracketed IPv6 endpoints and reads omitted counters as zero', () => {
    const v6 = eventsOf(flowLines()[0], NETWORK)[2]!;
    assert.deepEqual(v6.destinationEndpoint, { ip: 'fd7a:115c:a1e0::7', port: 443 });
    assert.equal(v6.sourceEndpoint?.port, 51240);
    assert.deepEqual([v6.attributes.rxPkts, v6.attributes.rxBytes], [0, 0]);
  });

  it('leaves out zero ports and names DERP relays by region', () => {
    const events = eventsOf(flowLines()[0], NETWORK);
    assert.deepEqual(events[3]!.destinationEndpoint, { ip: '100.64.0.9' });
    const derp = events[5]!;
    assert.deepEqual(derp.destinationEndpoint, { derpRegion: 2 });
    assert.equal(derp.attributes.dst, '127.3.3.40:2');
    assert.equal(derp.entityKeys.includes('ip:127.3.3.40'), false);
  });

  it('accepts anonymised exit traffic with scrubbed ports and protocol', () => {
    const exit = onlyEvent(flowLines()[2], NETWORK);
    assert.equal(exit.activity, 'exit');
    assert.deepEqual(exit.sourceEndpoint, { ip: '100.101.102.103' });
    assert.deepEqual(exit.destinationEndpoint, { ip: '93.184.215.14' });
    assert.equal('proto' in exit.attributes, false);
    assert.deepEqual([exit.attributes.txBytes, exit.attributes.rxBytes], [4100, 51234]);
    assert.ok(exit.entityKeys.includes('node:nExitNd01CNTRL'));
  });

  it('accepts exit traffic whose addresses were scrubbed entirely', () => {
    const record = { nodeId: 'nExit', start: '2024-05-14T06:45:10Z', exitTraffic: [{ txPkts: 3, rxBytes: 9 }] };
    const event = onlyEvent(record, NETWORK);
    assert.equal(event.sourceEndpoint, undefined);
    assert.deepEqual([event.attributes.txPkts, event.attributes.rxBytes, event.attributes.txBytes], [3, 9, 0]);
  });

  it('reports subnet traffic under the subnet router node', () => {
    const subnet = onlyEvent(flowLines()[1], NETWORK);
    assert.equal(subnet.activity, 'subnet');
    assert.deepEqual(subnet.entityKeys, ['meshnet:example.com', 'node:nSubRtr01CNTRL', 'ip:100.101.102.103', 'ip:10.20.0.15']);
    assert.equal(subnet.sourceEndpoint?.node, undefined);
  });

  it('matches srcNode and dstNodes to endpoints by address', () => {
    const event = onlyEvent(flowLines()[3], NETWORK);
    assert.deepEqual(event.sourceEndpoint, {
      ip: '100.101.102.103', port: 51234, node: 'nQ7rS8tU9CNTRL', name: 'build-runner-07.example.ts.net', tags: ['tag:ci', 'tag:prod'],
    });
    assert.deepEqual(event.destinationEndpoint, {
      ip: '100.64.0.7', port: 22, node: 'nDbSrv01CNTRL', name: 'db-01.example.ts.net', user: 'alice@example.com',
    });
    assert.ok(event.entityKeys.includes('node:nDbSrv01CNTRL'));
    assert.ok(event.entityKeys.includes('user:alice@example.com'));
    assert.equal(event.time, '2024-05-14T06:45:14.516217296Z');
  });

  it('reads an API response like the streamed records, with per-entry ids and references', () => {
    const response = flowResponse();
    const events = eventsOf(response, NETWORK);
    assert.deepEqual(events.map(flowView), flowLines().flatMap((r) => eventsOf(r, NETWORK)).map(flowView));
    const path = 'logs[1].subnetTraffic[0]';
    assert.equal(events[6]!.id, deterministicEventId('mesh-vpn-logs', 'network', response, 6));
    assert.equal(events[6]!.source.recordId, `${rawDigest(response)}#${path}`);
    assert.equal(events[6]!.rawReference, rawReference(response, path));
    assert.equal(new Set(events.map((e) => e.id)).size, events.length);
  });

  it('omits the meshnet key when no meshnet is given', () => {
    const event = onlyEvent(flowLines()[2], { ingestedAt: INGESTED_AT, logType: 'network' });
    assert.equal(event.entityKeys.some((k) => k.startsWith('meshnet:')), false);
  });

  it('takes the time from end, then logged, when start is absent', () => {
    const entry = { virtualTraffic: [{ proto: 6, src: '100.64.0.1:1', dst: '100.64.0.2:2' }] };
    assert.equal(onlyEvent({ nodeId: 'n1', end: '2024-05-14T06:45:11Z', ...entry }, NETWORK).time, '2024-05-14T06:45:11Z');
    assert.equal(onlyEvent({ nodeId: 'n1', logged: '2024-05-14T06:45:12.5Z', ...entry }, NETWORK).time, '2024-05-14T06:45:12.500Z');
  });
});

describe('meshVpnLogs configuration audit logs', () => {
  it('keeps old and new of an ACL update', () => {
    const response = auditResponse();
    const acl = eventsOf(response, CONFIGURATION)[0]!;
    const raw = (response.logs as Json[])[0]!;
    assert.equal(acl.class, 'configuration_change');
    assert.equal(acl.category, 'configuration');
    assert.equal(acl.activity, 'update');
    assert.equal(acl.outcome, 'success');
    assert.equal(acl.time, '2024-05-14T06:40:12.345Z');
    assert.equal(acl.attributes.old, raw.old);
    assert.equal(acl.attributes.new, raw.new);
    assert.deepEqual(acl.attributes.target, { id: 'example.com', name: 'example.com', type: 'TAILNET', property: 'ACL' });
    assert.equal(acl.attributes.tailnetId, 'TXXXXXXXXX11CNTRL');
    assert.deepEqual(acl.actor, { user: 'alice@example.com', id: 'uAbCdEf1CNTRL', type: 'USER', displayName: 'Alice Example' });
    assert.deepEqual(acl.entityKeys, ['meshnet:example.com', 'user:alice@example.com']);
    assert.deepEqual(acl.correlation, { uid: '3f4c1a9e2b7d48c6a1e05f9b8d7c6e21' });
    assert.equal(acl.source.instance, 'configuration');
    assert.equal(acl.rawReference, rawReference(response, 'logs[0]'));
  });

  it('adds node keys for node targets and node actors, and no user key for the service', () => {
    const events = eventsOf(auditResponse(), CONFIGURATION);
    assert.equal(events[1]!.activity, 'approve');
    assert.deepEqual(events[1]!.entityKeys, ['meshnet:example.com', 'user:alice@example.com', 'node:nQ7rS8tU9CNTRL']);
    assert.deepEqual(events[3]!.actor, { node: 'nQ7rS8tU9CNTRL', id: 'nQ7rS8tU9CNTRL', type: 'NODE', displayName: 'build-runner-07' });
    assert.deepEqual(events[3]!.attributes.new, ['tag:ci', 'tag:prod']);
    assert.deepEqual(events[4]!.entityKeys, ['meshnet:example.com', 'node:nOld1Node2CNTRL']);
    assert.deepEqual(events[4]!.actor, { type: 'SERVICE', displayName: 'Tailscale' });
    assert.equal(events[4]!.activity, 'expire');
  });

  it('reads the log-streaming wrapper with time as a number or a string', () => {
    const [numeric, text] = auditStream().map((r) => onlyEvent(r, CONFIGURATION));
    assert.equal(numeric!.time, '2023-06-27T22:58:14.915Z');
    assert.equal(text!.time, '2023-07-19T16:10:48.172Z');
    assert.equal(numeric!.activity, 'disable');
    assert.equal((numeric!.attributes.target as Json).property, 'MACHINE_APPROVAL_NEEDED');
    assert.deepEqual(numeric!.attributes.fields, { recorded: '2023-06-27 22:58:15.824694387' });
    assert.ok(text!.entityKeys.includes('user:homer.simpson@yourcompany.io'));
  });

  it('falls back to fields.recorded (UTC) when the stream time is absent', () => {
    const { time: _time, ...record } = auditStream()[0]!;
    assert.equal(onlyEvent(record, CONFIGURATION).time, '2023-06-27T22:58:15.824694387Z');
  });

  it('gives a lone audit event the id of its whole record', () => {
    const record = (auditResponse().logs as Json[])[2]!;
    const event = onlyEvent(record, CONFIGURATION);
    assert.equal(event.id, deterministicEventId('mesh-vpn-logs', 'configuration', record));
    assert.equal(event.source.recordId, rawDigest(record));
    assert.equal(event.activity, 'create');
  });

  it('writes camelCase and spaced actions in lower_snake_case', () => {
    const base = { eventTime: '2024-05-14T06:40:12Z' };
    assert.equal(onlyEvent({ ...base, action: 'enableMagicDNS' }, CONFIGURATION).activity, 'enable_magic_dns');
    assert.equal(onlyEvent({ ...base, action: 'LOG OUT' }, CONFIGURATION).activity, 'log_out');
  });
});

describe('meshVpnLogs refusals', () => {
  it('refuses a missing or unknown logType and non-objects', () => {
    assert.match(refusal(flowLines()[0], { ingestedAt: INGESTED_AT }), /^logType: expected network or configuration/);
    assert.match(refusal(flowLines()[0], { ingestedAt: INGESTED_AT, logType: 'dns' }), /^logType: /);
    for (const record of [null, 'x', 3, []]) assert.match(refusal(record, NETWORK), /^record: expected a JSON object/);
  });

  it('names the flow field that cannot be read', () => {
    const flow = (entry: Json, extra: Json = {}) => ({ nodeId: 'n1', start: '2024-05-14T06:45:04Z', virtualTraffic: [entry], ...extra });
    assert.match(refusal({ start: '2024-05-14T06:45:04Z' }, NETWORK), /^nodeId: /);
    assert.match(refusal(flow({ dst: 'not-an-address' }), NETWORK), /^virtualTraffic\[0\]\.dst: expected "ip:port"/);
    assert.match(refusal(flow({ dst: '[100.64.0.7]:22' }), NETWORK), /^virtualTraffic\[0\]\.dst: /);
    assert.match(refusal(flow({ src: '100.64.0.7:70000' }), NETWORK), /^virtualTraffic\[0\]\.src: /);
    assert.match(refusal(flow({ txBytes: -1 }), NETWORK), /^virtualTraffic\[0\]\.txBytes: expected a non-negative integer/);
    assert.match(refusal(flow({ proto: 'tcp' }), NETWORK), /^virtualTraffic\[0\]\.proto: /);
    assert.match(refusal(flow({}, { start: '14 May 2024' }), NETWORK), /^start: expected an RFC 3339 date-time/);
    assert.match(refusal({ nodeId: 'n1', virtualTraffic: [] }, NETWORK), /^start \/ end \/ logged: missing/);
    assert.match(refusal(flow({}, { exitTraffic: {} }), NETWORK), /^exitTraffic: expected an array/);
    assert.match(refusal({ logs: [flowLines()[0], { nodeId: 'n2' }] }, NETWORK), /^logs\[1\]\.start/);
    assert.match(refusal({ logs: 'none' }, NETWORK), /^logs: expected an array/);
  });

  it('names the audit field that cannot be read', () => {
    assert.match(refusal({ eventTime: '2024-05-14T06:40:12Z' }, CONFIGURATION), /^action: expected the action name/);
    assert.match(refusal({ eventTime: '2024-05-14T06:40:12Z', action: '***' }, CONFIGURATION), /^action: /);
    assert.match(refusal({ action: 'UPDATE', eventTime: 'yesterday' }, CONFIGURATION), /^eventTime: expected an RFC 3339/);
    assert.match(refusal({ action: 'UPDATE' }, CONFIGURATION), /^eventTime: missing/);
    assert.match(refusal({ action: 'UPDATE', eventTime: '2024-05-14T06:40:12Z', actor: 'alice' }, CONFIGURATION), /^actor: expected an object/);
    assert.match(refusal({ event: { eventGroupID: 'g' }, time: 1687906694.915 }, CONFIGURATION), /^event\.action: /);
    assert.match(refusal({ event: { action: 'DISABLE' }, time: 'soon' }, CONFIGURATION), /^time: expected epoch seconds/);
    assert.match(refusal({ logs: [{ action: 'UPDATE', eventTime: 5 }] }, CONFIGURATION), /^logs\[0\]\.eventTime: /);
  });
});

const addrPort = fc.oneof(
  fc.tuple(fc.ipV4(), fc.integer({ min: 0, max: 65535 })).map(([ip, port]) => `${ip}:${port}`),
  fc.tuple(fc.ipV6(), fc.integer({ min: 0, max: 65535 })).map(([ip, port]) => `[${ip}]:${port}`),
);
const counts = fc.record({
  proto: fc.integer({ min: 0, max: 255 }), src: addrPort, dst: addrPort,
  txPkts: fc.nat(), txBytes: fc.nat(), rxPkts: fc.nat(), rxBytes: fc.nat(),
}, { requiredKeys: [] });
const rfc3339 = fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true })
  .map((d) => d.toISOString());
const validFlow = fc.record({
  nodeId: fc.string({ minLength: 1 }),
  start: rfc3339,
  virtualTraffic: fc.array(counts, { maxLength: 4 }),
  subnetTraffic: fc.array(counts, { maxLength: 2 }),
  exitTraffic: fc.array(counts, { maxLength: 2 }),
  physicalTraffic: fc.array(counts, { maxLength: 2 }),
}, { requiredKeys: ['nodeId', 'start'] });
const anything = fc.oneof(fc.jsonValue(), addrPort, rfc3339);
const plausibleFlow = fc.dictionary(
  fc.constantFrom('nodeId', 'start', 'end', 'logged', 'srcNode', 'dstNodes', ...TRAFFIC_FIELDS),
  fc.oneof(anything, fc.array(fc.dictionary(fc.constantFrom('proto', 'src', 'dst', 'txPkts', 'rxBytes', 'nodeId', 'addresses'), anything))),
);
const plausibleAudit = fc.dictionary(
  fc.constantFrom('action', 'eventTime', 'actor', 'target', 'old', 'new', 'eventGroupID', 'event', 'time', 'fields'),
  fc.oneof(anything, fc.constantFrom('UPDATE', 'DISABLE'), fc.dictionary(fc.constantFrom('loginName', 'id', 'type', 'action', 'recorded'), anything)),
);

function neverThrowsAndValid(record: unknown, ctx: NormalizeContext): NormalizedEvent[] | undefined {
  const result = meshVpnLogs.normalize(record, ctx);
  if (!result.ok) {
    assert.ok(typeof result.error === 'string' && result.error.length > 0);
    return undefined;
  }
  result.events.forEach(assertValid);
  return result.events;
}

describe('meshVpnLogs properties', () => {
  it('never throws on arbitrary JSON, and every event passes the schema', () => {
    for (const ctx of [NETWORK, CONFIGURATION]) {
      fc.assert(fc.property(fc.jsonValue(), (value) => { neverThrowsAndValid(value, ctx); }), { numRuns: 300 });
      fc.assert(fc.property(fc.jsonValue(), (value) => { neverThrowsAndValid({ logs: [value] }, ctx); }), { numRuns: 100 });
    }
  });

  it('never throws on records with plausible keys and any values', () => {
    fc.assert(fc.property(plausibleFlow, (record) => { neverThrowsAndValid(record, NETWORK); }), { numRuns: 500 });
    fc.assert(fc.property(plausibleAudit, (record) => { neverThrowsAndValid(record, CONFIGURATION); }), { numRuns: 500 });
  });

  it('accepts every well-formed flow record, one event per entry with its counts', () => {
    fc.assert(fc.property(validFlow, (record) => {
      const events = neverThrowsAndValid(record, NETWORK);
      assert.equal(events?.length, entryCount(record));
      const entries = TRAFFIC_FIELDS.flatMap((f) => (record as Json)[f] as Json[] | undefined ?? []);
      events.forEach((e, i) => assert.equal(e.attributes.txBytes, entries[i]!.txBytes ?? 0));
    }), { numRuns: 300 });
  });
});
