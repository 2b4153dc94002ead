import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import * as v from 'valibot';
import { type NormalizedEvent, NormalizedEventSchema } from '../../src/events/normalized-event.js';
import { opentelemetryLog } from '../../src/normalizers/opentelemetry-log.js';
import { deterministicEventId, rawDigest, rawReference } from '../../src/normalizers/record-id.js';
import type { NormalizeContext } from '../../src/normalizers/types.js';
import { fixturePath } from '../helpers/paths.js';

const INGESTED_AT = '2024-05-14T07:00:00Z';
const CTX: NormalizeContext = { ingestedAt: INGESTED_AT };
type Json = Record<string, unknown>;

function sampleText(name: string): string {
  return readFileSync(fixturePath('opentelemetry-log', name), 'utf8');
}
const sample = (name: string): Json => JSON.parse(sampleText(name)) as Json;
const edgeCases = (): Json[] => sampleText('otlp-edge-cases.jsonl').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as Json);
function edgeCase(notePrefix: string): Json {
  const found = edgeCases().find((c) => String(c._note).startsWith(notePrefix));
  assert.ok(found, `no edge case starting ${notePrefix}`);
  return found;
}

function assertValid(event: unknown): void {
  const parsed = v.safeParse(NormalizedEventSchema, event);
  assert.ok(parsed.success, JSON.stringify(parsed.issues?.map((i) => `${i.path?.map((p) => p.key).join('.')}: ${i.message}`)));
}
function eventsOf(record: unknown, ctx: NormalizeContext = CTX): NormalizedEvent[] {
  const result = opentelemetryLog.normalize(record, ctx);
  assert.ok(result.ok, result.ok ? '' : result.error);
  result.events.forEach(assertValid);
  return result.events;
}
function onlyEvent(record: unknown, ctx: NormalizeContext = CTX): NormalizedEvent {
  const events = eventsOf(record, ctx);
  assert.equal(events.length, 1);
  return events[0]!;
}
function refusal(record: unknown, ctx: NormalizeContext = CTX): string {
  const result = opentelemetryLog.normalize(record, ctx);
  assert.equal(result.ok, false, 'expected the record to be refused');
  return result.ok ? '' : result.error;
}
/** Counts LogRecords the way the OTLP/JSON envelope nests them. */
function logRecordCount(request: Json): number {
  const rls = (request.resourceLogs ?? []) as Json[];
  return rls.flatMap((rl) => (rl.scopeLogs ?? []) as Json[]).flatMap((sl) => (sl.logRecords ?? []) as unknown[]).length;
}
function withRecords(...logRecords: unknown[]): Json {
  return { resourceLogs: [{ resource: { attributes: [] }, scopeLogs: [{ scope: { name: 't' }, logRecords }] }] };
}

describe('opentelemetryLog samples', () => {
  it('accepts every sample file with one valid event per LogRecord', () => {
    const requests = [
      sample('otlp-proto-examples-logs.json'), sample('otlp-proto-examples-events.json'),
      sample('otlp-constructed-export-request.json'), ...edgeCases(),
    ];
    for (const request of requests) assert.equal(eventsOf(request).length, logRecordCount(request), String(request._note ?? ''));
    assert.equal(eventsOf(sample('otlp-constructed-export-request.json')).length, 6);
  });

  it('keeps the nanoseconds of timeUnixNano exactly', () => {
    const events = eventsOf(sample('otlp-constructed-export-request.json'));
    assert.equal(events[2]!.time, '2024-05-14T06:26:30.123456789Z');
    assert.equal(events[0]!.time, '2024-05-14T06:23:03.117204Z');
  });

  it('lower-cases upper-case trace and span ids', () => {
    const events = eventsOf(sample('otlp-constructed-export-request.json'));
    assert.deepEqual(events[3]!.correlation, { traceId: '5b8efff798038103d269b633813fc60c', spanId: 'eee19b7ec3c1b174' });
    assert.deepEqual(events[2]!.correlation, { traceId: '5b8efff798038103d269b633813fc60c', spanId: 'eee19b7ec3c1b174', flags: 1 });
    assert.equal(onlyEvent(sample('otlp-proto-examples-logs.json')).correlation?.traceId, '5b8efff798038103d269b633813fc60c');
  });

  it('maps severityNumber through the documented table and keeps severityText', () => {
    const events = eventsOf(sample('otlp-constructed-export-request.json'));
    assert.deepEqual(events.map((e) => e.severity), [2, 3, 4, 6, undefined, 2]);
    assert.deepEqual(events.map((e) => e.attributes.severityText), ['info', 'notice', 'WARN', 'ERROR', 'Information', undefined]);
    const table = Array.from({ length: 25 }, (_, n) => onlyEvent(withRecords({ severityNumber: n })).severity);
    assert.deepEqual(table, [undefined, 0, 0, 0, 0, 1, 1, 1, 1, 2, 3, 3, 3, 4, 5, 5, 5, 6, 7, 8, 8, 9, 10, 10, 10]);
  });

  it('decodes a kvlist body into an object under attributes.body', () => {
    const sshd = eventsOf(sample('otlp-constructed-export-request.json'))[0]!;
    const body = sshd.attributes.body as Json;
    assert.equal(body.SYSLOG_IDENTIFIER, 'sshd');
    assert.equal(body.MESSAGE, 'Failed password for invalid user admin from 203.0.113.50 port 52514 ssh2');
    assert.equal(body._SYSTEMD_UNIT, 'ssh.service');
    assert.equal(sshd.category, 'application');
    const pageView = onlyEvent(sample('otlp-proto-examples-events.json'));
    assert.deepEqual(pageView.attributes.body, {
      type: 0, url: 'https://www.guidgenerator.com/online-guid-generator.aspx',
      referrer: 'https://wwww.google.com', title: 'Free Online GUID Generator',
    });
  });

  it('decodes every AnyValue kind, keeping dotted OTLP keys as one key', () => {
    const { attributes } = onlyEvent(sample('otlp-proto-examples-logs.json'));
    assert.equal(attributes['string.attribute'], 'some string');
    assert.equal(attributes['boolean.attribute'], true);
    assert.equal(attributes['int.attribute'], 10);
    assert.equal(attributes['double.attribute'], 637.704);
    assert.deepEqual(attributes['array.attribute'], ['many', 'values']);
    assert.deepEqual(attributes['map.attribute'], { 'some.map.key': 'some value' });
    assert.equal(attributes.body, 'Example log record');
  });

  it('flattens resource and scope onto each event and names the service', () => {
    const event = onlyEvent(sample('otlp-proto-examples-logs.json'));
    assert.deepEqual(event.attributes.resource, { 'service.name': 'my.service' });
    assert.deepEqual(event.attributes.scope, { name: 'my.library', version: '1.0.0', attributes: { 'my.scope.attribute': 'some scope attribute' } });
    assert.equal(event.source.instance, 'my.service');
    assert.deepEqual(event.service, { name: 'my.service' });
    assert.deepEqual(event.entityKeys, ['service:my.service']);
  });

  it('uses resource host.name as source.instance and host key', () => {
    const events = eventsOf(sample('otlp-constructed-export-request.json'));
    assert.equal(events[0]!.source.instance, 'bastion-01');
    assert.deepEqual(events[0]!.entityKeys, ['host:bastion-01']);
    assert.equal(events[2]!.source.instance, 'auth-api');
    assert.deepEqual(events[2]!.service, { name: 'auth-api', version: '2.3.1' });
  });

  it('falls back to observedTimeUnixNano when timeUnixNano is absent', () => {
    assert.equal(eventsOf(sample('otlp-constructed-export-request.json'))[4]!.time, '2024-05-14T06:26:32Z');
  });

  it('marks records with an eventName as activity event', () => {
    const event = onlyEvent(sample('otlp-proto-examples-events.json'));
    assert.equal(event.activity, 'event');
    assert.equal(event.attributes.eventName, 'browser.page_view');
    assert.equal(eventsOf(sample('otlp-constructed-export-request.json'))[0]!.activity, 'log');
  });

  it('lifts user.name and client.address into actor, endpoint and entity keys', () => {
    const login = eventsOf(sample('otlp-constructed-export-request.json'))[2]!;
    assert.deepEqual(login.actor, { user: 'bob' });
    assert.deepEqual(login.sourceEndpoint, { ip: '198.51.100.23', port: 51234 });
    assert.deepEqual(login.entityKeys, ['service:auth-api', 'user:bob', 'ip:198.51.100.23']);
    assert.equal(login.attributes['session.blob'], 'AAFiaW5hcnn/');
    assert.equal(login.attributes.droppedAttributesCount, 2);
    assert.equal(login.attributes.flags, 1);
    assert.equal(login.attributes['http.response.status_code'], 401);
  });

  it('gives each LogRecord of a request its own id, recordId and rawReference', () => {
    const request = sample('otlp-constructed-export-request.json');
    const events = eventsOf(request);
    const path = 'resourceLogs[1].scopeLogs[0].logRecords[1]';
    assert.equal(events[3]!.id, deterministicEventId('opentelemetry-log', '', request, 3));
    assert.equal(events[3]!.rawReference, rawReference(request, path));
    assert.equal(events[3]!.source.recordId, `${rawDigest(request)}#${path}`);
    assert.equal(new Set(events.map((e) => e.id)).size, events.length);
    assert.deepEqual(eventsOf(structuredClone(request)), events);
  });
});

describe('opentelemetryLog edge cases (otlp-edge-cases.jsonl)', () => {
  const first = (notePrefix: string) => onlyEvent(edgeCase(notePrefix));

  it('accepts numeric timestamps, keeping what the JSON parser left of them', () => {
    // 1715667990123456789 is above 2^53: JSON.parse already rounded it to ...768 before the normalizer ran.
    assert.equal(first('timeUnixNano/observedTimeUnixNano as JSON numbers').time, '2024-05-14T06:26:30.123456768Z');
  });
  it('accepts intValue as a JSON number', () => assert.equal(first('intValue as JSON number').attributes.n, 42));
  it('tolerates severityNumber given as the enum name', () => {
    const event = first('severityNumber as enum NAME');
    assert.equal(event.attributes.severityNumber, 13);
    assert.equal(event.severity, 4);
  });
  it('sees snake_case field names as an empty request', () => {
    assert.deepEqual(eventsOf(edgeCase('snake_case field names')), []);
  });
  it('treats empty and all-zero ids as no trace context', () => {
    assert.equal(first('empty-string traceId/spanId').correlation, undefined);
    assert.equal(first('all-zero traceId and spanId').correlation, undefined);
  });
  it('drops a wrong-length traceId but keeps a valid spanId', () => {
    assert.deepEqual(first('traceId with wrong length').correlation, { spanId: 'eee19b7ec3c1b174' });
  });
  it('keeps NaN and Infinity doubles as their proto3 JSON strings', () => {
    const { attributes } = first('doubleValue special values');
    assert.deepEqual([attributes.a, attributes.b, attributes.c], ['NaN', 'Infinity', '-Infinity']);
  });
  it('reads an empty AnyValue as null, keeps an empty key and omits an absent body', () => {
    const { attributes } = first('AnyValue with no variant set');
    assert.equal(attributes.empty, null);
    assert.equal(attributes[''], 'no key');
    assert.equal('body' in attributes, false);
  });
  it('lets the first of duplicate attribute keys win', () => assert.equal(first('duplicate attribute keys').attributes['user.name'], 'alice'));
  it('reads timeUnixNano "0" as unknown and uses the observed time', () => {
    assert.equal(first('timeUnixNano "0" means unknown').time, '2024-05-14T06:26:30Z');
  });
  it('masks flags to the W3C trace-flags byte', () => {
    const event = first('flags with reserved upper bits');
    assert.deepEqual(event.correlation, { flags: 1 });
    assert.equal(event.attributes.flags, 257);
  });
  it('ignores unknown fields at every level', () => {
    const event = first('unknown fields at every level');
    assert.deepEqual(event.attributes, { body: 'x' });
    assert.equal(event.source.instance, '-');
  });
  it('accepts an empty request with no events', () => assert.deepEqual(eventsOf(edgeCase('empty request')), []));
  it('decodes a nested kvlist body with arrays and bytes', () => {
    assert.deepEqual(first('body is a nested kvlist').attributes.body, { list: [1, 2.5, ['deep']], raw: 'AAEC/w==' });
  });
});

describe('opentelemetryLog bare LogRecords', () => {
  const context = {
    resource: { attributes: [{ key: 'host.name', value: { stringValue: 'web-1' } }, { key: 'service.name', value: { stringValue: 'shop' } }] },
    scope: { name: 'app.logger', version: '3' },
  };

  it('takes resource and scope from the batch context', () => {
    const record = { timeUnixNano: '1715667990000000001', body: { stringValue: 'hi' }, traceId: 'AB'.repeat(16) };
    const event = onlyEvent(record, { ...CTX, context });
    assert.equal(event.time, '2024-05-14T06:26:30.000000001Z');
    assert.equal(event.source.instance, 'web-1');
    assert.deepEqual(event.entityKeys, ['host:web-1', 'service:shop']);
    assert.deepEqual(event.attributes.resource, { 'host.name': 'web-1', 'service.name': 'shop' });
    assert.deepEqual(event.attributes.scope, { name: 'app.logger', version: '3' });
    assert.deepEqual(event.correlation, { traceId: 'ab'.repeat(16) });
    assert.equal(event.id, deterministicEventId('opentelemetry-log', '', record));
    assert.equal(event.source.recordId, rawDigest(record));
    assert.equal(event.rawReference, rawReference(record));
  });

  it('falls back to ingestedAt when the record has no time', () => {
    const event = onlyEvent({ body: { stringValue: 'no time' } });
    assert.equal(event.time, INGESTED_AT);
    assert.equal(event.source.instance, '-');
  });

  it('keeps int64 values beyond 2^53 as decimal strings', () => {
    const ints = ['9007199254740991', '9007199254740993', '-9223372036854775808'];
    const { attributes } = onlyEvent({ attributes: ints.map((n, i) => ({ key: `i${i}`, value: { intValue: n } })) });
    assert.deepEqual([attributes.i0, attributes.i1, attributes.i2], [9007199254740991, '9007199254740993', '-9223372036854775808']);
  });

  it('moves a record attribute named like a LogRecord field to log.attributes', () => {
    const event = onlyEvent({ body: { stringValue: 'real' }, attributes: [{ key: 'body', value: { stringValue: 'fake' } }] });
    assert.equal(event.attributes.body, 'real');
    assert.deepEqual(event.attributes['log.attributes'], { body: 'fake' });
  });

  it('keeps a __proto__ attribute as an own key without touching the prototype', () => {
    const record = JSON.parse('{"body":{"stringValue":"x"},"attributes":[{"key":"__proto__","value":{"kvlistValue":{"values":[{"key":"polluted","value":{"boolValue":true}}]}}}]}');
    const { attributes } = onlyEvent(record);
    assert.ok(Object.hasOwn(attributes, '__proto__'));
    assert.equal((attributes as { polluted?: unknown }).polluted, undefined);
    assert.equal(({} as { polluted?: unknown }).polluted, undefined);
  });
});

describe('opentelemetryLog refusals', () => {
  it('refuses what is not a JSON object', () => {
    for (const record of [null, 'text', 42, [1]]) assert.match(refusal(record), /^record: expected a JSON object/);
  });
  it('names the field that cannot be read', () => {
    assert.match(refusal({ resourceLogs: {} }), /^resourceLogs: expected an array/);
    assert.match(refusal({ timeUnixNano: 'yesterday' }), /^timeUnixNano: expected nanoseconds/);
    assert.match(refusal({ timeUnixNano: -5 }), /^timeUnixNano: /);
    assert.match(refusal({ observedTimeUnixNano: 1.5 }), /^observedTimeUnixNano: /);
    assert.match(refusal({ severityNumber: 25 }), /^severityNumber: expected an integer 0..24/);
    assert.match(refusal({ severityText: 3 }), /^severityText: expected a string/);
    assert.match(refusal({ attributes: [{ key: 'k', value: { stringValue: 5 } }] }), /^attributes\[0\]\.value\.stringValue: expected a string/);
    assert.match(refusal({ body: { stringValue: 'a', intValue: '1' } }), /^body: more than one AnyValue variant/);
    assert.match(refusal({ body: { intValue: '9223372036854775808' } }), /^body\.intValue: outside the int64 range/);
    assert.match(refusal({ body: { bytesValue: 'not base64!' } }), /^body\.bytesValue: expected base64/);
    assert.match(refusal({ body: { stringValue: 'x' } }, { ...CTX, context: { resource: 'web-1' } }), /^context\.resource: /);
  });
  it('refuses a whole request for one bad LogRecord, naming its path', () => {
    const error = refusal(withRecords({ body: { stringValue: 'fine' } }, { flags: 'high' }));
    assert.equal(error, 'resourceLogs[0].scopeLogs[0].logRecords[1].flags: expected an unsigned 32-bit integer');
  });
  it('refuses AnyValues nested deeper than its bound', () => {
    let body: Json = { stringValue: 'leaf' };
    for (let i = 0; i < 100; i++) body = { arrayValue: { values: [body] } };
    assert.match(refusal({ body }), /nested deeper than 64 levels/);
  });
  it('answers instead of throwing for a record too deep to hash', () => {
    let deep: unknown = [];
    for (let i = 0; i < 200_000; i++) deep = [deep];
    assert.match(refusal({ body: { stringValue: 'x' }, extra: deep }), /^record: cannot be read/);
  });
});

const { anyValue } = fc.letrec<{ anyValue: unknown }>((tie) => ({
  anyValue: fc.oneof(
    { depthSize: 'small' },
    fc.record({ stringValue: fc.string() }),
    fc.record({ boolValue: fc.boolean() }),
    fc.record({ intValue: fc.oneof(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String), fc.maxSafeInteger()) }),
    fc.record({ doubleValue: fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom('NaN', 'Infinity', '-Infinity')) }),
    fc.record({ bytesValue: fc.base64String() }),
    fc.record({ arrayValue: fc.record({ values: fc.array(tie('anyValue'), { maxLength: 3 }) }) }),
    fc.record({ kvlistValue: fc.record({ values: fc.array(fc.record({ key: fc.string(), value: tie('anyValue') }), { maxLength: 3 }) }) }),
    fc.constant({}),
  ),
}));
const hex = (length: number) => fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF'), minLength: length, maxLength: length });
const validLogRecord = fc.record({
  timeUnixNano: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String),
  observedTimeUnixNano: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String),
  severityNumber: fc.integer({ min: 0, max: 24 }),
  severityText: fc.string(),
  body: anyValue,
  attributes: fc.array(fc.record({ key: fc.string(), value: anyValue }), { maxLength: 4 }),
  droppedAttributesCount: fc.nat(),
  flags: fc.integer({ min: 0, max: 0xffff_ffff }),
  traceId: hex(32),
  spanId: hex(16),
  eventName: fc.string(),
}, { requiredKeys: [] });
/** Plausible keys with any JSON value, so most records are malformed in some field. */
const plausibleLogRecord = fc.dictionary(
  fc.constantFrom('timeUnixNano', 'observedTimeUnixNano', 'severityNumber', 'severityText', 'body', 'attributes', 'flags', 'traceId', 'spanId', 'eventName'),
  fc.oneof(fc.jsonValue(), anyValue, fc.array(fc.record({ key: fc.jsonValue(), value: fc.oneof(anyValue, fc.jsonValue()) }))),
);
const request = (record: fc.Arbitrary<unknown>) => fc.record({
  resourceLogs: fc.array(fc.record({
    resource: fc.record({ attributes: fc.array(fc.record({ key: fc.constantFrom('host.name', 'service.name', 'x'), value: anyValue }), { maxLength: 3 }) }),
    scopeLogs: fc.array(fc.record({ scope: fc.record({ name: fc.string() }), logRecords: fc.array(record, { maxLength: 3 }) }), { maxLength: 2 }),
  }), { maxLength: 2 }),
});

/** Runs the normalizer, which must not throw, and checks every event it returns against the schema. */
function neverThrowsAndValid(record: unknown, ctx: NormalizeContext = CTX): NormalizedEvent[] | undefined {
  const result = opentelemetryLog.normalize(record, ctx);
  if (!result.ok) {
    assert.equal(typeof result.error, 'string');
    assert.ok(result.error.length > 0);
    return undefined;
  }
  result.events.forEach(assertValid);
  return result.events;
}

describe('opentelemetryLog properties', () => {
  it('never throws on arbitrary JSON, and every event passes the schema', () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => { neverThrowsAndValid(value); }), { numRuns: 500 });
    fc.assert(fc.property(fc.jsonValue(), fc.jsonValue(), (value, context) => {
      neverThrowsAndValid(value, { ...CTX, context: { resource: context, scope: context } });
    }), { numRuns: 200 });
  });

  it('never throws on records and requests with plausible keys and any values', () => {
    fc.assert(fc.property(plausibleLogRecord, (record) => { neverThrowsAndValid(record); }), { numRuns: 500 });
    fc.assert(fc.property(request(plausibleLogRecord), (req) => { neverThrowsAndValid(req); }), { numRuns: 200 });
  });

  it('accepts every well-formed LogRecord and request, one event per LogRecord', () => {
    fc.assert(fc.property(validLogRecord, (record) => {
      const events = neverThrowsAndValid(Object.keys(record).length > 0 ? record : { body: {} });
      assert.equal(events?.length, 1);
    }), { numRuns: 300 });
    fc.assert(fc.property(request(validLogRecord), (req) => {
      assert.equal(neverThrowsAndValid(req)?.length, logRecordCount(req));
    }), { numRuns: 200 });
  });
});
