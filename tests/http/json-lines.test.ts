import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fixturePath } from '../helpers/paths.js';
import fc from 'fast-check';
import { makeEvent, startTestInstance, type TestInstance } from '../helpers/instance.js';
import { parseJsonLines } from '../../src/http/body.js';
import { HttpError } from '../../src/http/errors.js';

type Result = { accepted?: Array<{ id: string; source: { instance: string } }>; acceptedCount?: number; duplicates: number; alerts: unknown[]; incidents: unknown[] };

const fileLines = (path: string) => readFileSync(path, 'utf8').split('\n').filter((l) => l.trim().length > 0);
const journalLines = () => readdirSync(fixturePath('linux-journal')).flatMap((f) => fileLines(fixturePath('linux-journal', f)))
  .filter((l) => /"(__REALTIME_TIMESTAMP|_SOURCE_REALTIME_TIMESTAMP)"/.test(l)).slice(0, 12);

/** Every ingest route with records as one JSON text per line, as the tool that wrote them writes them. */
const ROUTES: ReadonlyArray<{ path: string; lines: () => string[] }> = [
  { path: '/api/v1/events', lines: () => [makeEvent({ id: 'jl-1' }), makeEvent({ id: 'jl-2' }), makeEvent({ id: 'jl-3' })].map((e) => JSON.stringify(e)) },
  { path: '/api/v1/ingest/network-monitor?logType=conn', lines: () => fileLines(fixturePath('network-monitor', 'zeek-docs', 'conn.jsonl')) },
  { path: '/api/v1/ingest/syslog-rfc5424', lines: () => fileLines(fixturePath('syslog-rfc5424', 'valid.log')).map((message) => JSON.stringify({ message })) },
  { path: '/api/v1/ingest/opentelemetry-log', lines: () => [readFileSync(fixturePath('opentelemetry-log', 'otlp-constructed-export-request.json'), 'utf8').replace(/\n\s*/g, '')] },
  { path: '/api/v1/ingest/mesh-vpn-logs?logType=network&meshnet=example.ts.net', lines: () => fileLines(fixturePath('mesh-vpn-logs', 'network-flow-records-constructed.jsonl')) },
  { path: '/api/v1/ingest/linux-journal', lines: () => journalLines() },
];

describe('ingest routes take JSON lines (NDJSON)', () => {
  let t: TestInstance;
  before(async () => { t = await startTestInstance(); });
  after(async () => { await t.close(); });

  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    t.request(path, { method: 'POST', token: t.tokens.ingestor, body, headers: { 'content-type': 'application/json', ...headers } });

  it('accepts application/x-ndjson on every ingest route, the same events as the JSON array of the same records', async () => {
    for (const { path, lines } of ROUTES) {
      const records = lines();
      assert.ok(records.length > 0, path);
      const asLines = await post(path, `${records.join('\n')}\n`, { 'content-type': 'application/x-ndjson' });
      assert.equal(asLines.status, 202, `${path}: ${await asLines.clone().text()}`);
      const first = await asLines.json() as Result;
      assert.ok(first.accepted!.length > 0, path);
      assert.equal(first.duplicates, 0, path);
      // The same records as a JSON array are the same events: every one a duplicate now.
      const asArray = await post(path, `[${records.join(',')}]`);
      assert.equal(asArray.status, 202, path);
      const second = await asArray.json() as Result;
      assert.deepEqual(second.accepted!.map((e) => e.id), first.accepted!.map((e) => e.id), path);
      assert.equal(second.duplicates, second.accepted!.length, path);
    }
  });

  it('takes a Zeek log sent as application/json, one object per line (curl --data-binary @conn.log), and names logs by _path', async () => {
    const dns = fileLines(fixturePath('network-monitor', 'wrccdc-json-streaming', 'dns.jsonl')).slice(0, 3);
    const ssh = fileLines(fixturePath('network-monitor', 'wrccdc-json-streaming', 'ssh.jsonl')).slice(0, 2);
    const res = await post('/api/v1/ingest/network-monitor', [...dns, ...ssh].join('\r\n'));
    assert.equal(res.status, 202, await res.clone().text());
    const body = await res.json() as Result;
    assert.deepEqual(body.accepted!.map((e) => e.source.instance), ['dns', 'dns', 'dns', 'ssh', 'ssh']);
  });

  it('names the bad line and the accepted shapes when a body is neither JSON nor JSON lines', async () => {
    const good = JSON.stringify(makeEvent({ id: 'jl-bad-1' }));
    const res = await post('/api/v1/events', `${good}\n{"id": oops}\n${good}`, { 'content-type': 'application/x-ndjson' });
    assert.equal(res.status, 400);
    const body = await res.json() as { error: string; issues: string[] };
    assert.match(body.error, /a JSON array of records, a JSON object \{records, context\}, or one JSON object per line/);
    assert.equal(body.issues.length, 1);
    assert.match(body.issues[0]!, /^line 2: not one JSON value/);
    const broken = await post('/api/v1/ingest/syslog-rfc5424', '[{"message": "x"');
    assert.equal(broken.status, 400);
    assert.match((await broken.json() as { error: string }).error, /^malformed JSON; expected a JSON array of records.*application\/x-ndjson/);
    const other = await post('/api/v1/ingest/linux-journal', 'MESSAGE=x', { 'content-type': 'text/plain' });
    assert.equal(other.status, 415);
    assert.match((await other.json() as { error: string }).error, /application\/x-ndjson/);
  });

  it('counts records sent as lines against the batch limit', async () => {
    const small = await startTestInstance({ limits: { recordsPerRequest: 2 } });
    try {
      const lines = ['a', 'b', 'c'].map((id) => JSON.stringify(makeEvent({ id: `jl-limit-${id}` }))).join('\n');
      const res = await small.request('/api/v1/events', { method: 'POST', token: small.tokens.ingestor, body: lines, headers: { 'content-type': 'application/x-ndjson' } });
      assert.equal(res.status, 413);
    } finally {
      await small.close();
    }
  });

  it('omits the echoed events when the client prefers a minimal answer, and still counts duplicates', async () => {
    const records = [makeEvent({ id: 'min-1' }), makeEvent({ id: 'min-2' })];
    await post('/api/v1/events', JSON.stringify([records[0]]));
    const res = await post('/api/v1/events', JSON.stringify(records), { prefer: 'return=minimal' });
    assert.equal(res.status, 202);
    assert.equal(res.headers.get('preference-applied'), 'return=minimal');
    const body = await res.json() as Result;
    assert.deepEqual(body, { acceptedCount: 2, duplicates: 1, alerts: [], incidents: [], refused: [] });
  });
});

describe('parseJsonLines', () => {
  const bytes = (text: string) => new TextEncoder().encode(text);

  it('gives back exactly the objects written one per line, whatever the line endings and blank lines', () => {
    fc.assert(fc.property(fc.array(fc.dictionary(fc.string(), fc.jsonValue()), { minLength: 1, maxLength: 20 }), fc.constantFrom('\n', '\r\n'), fc.boolean(), (records, eol, blankLines) => {
      const text = records.map((r) => JSON.stringify(r)).join(blankLines ? `${eol}${eol}` : eol) + eol;
      assert.deepEqual(parseJsonLines(bytes(text)), JSON.parse(`[${records.map((r) => JSON.stringify(r)).join(',')}]`));
    }));
  });

  it('answers what splitting the whole decoded text answered: the same values, or the same lines named', () => {
    // The former parse: the body decoded whole (a leading BOM dropped), split at LF, each line trimmed.
    const whole = (b: Uint8Array): unknown => {
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(b);
      } catch {
        return { error: 'request body is not valid UTF-8' };
      }
      const values: unknown[] = [];
      const issues: string[] = [];
      text.split('\n').forEach((raw, i) => {
        const line = raw.trim();
        if (line === '') return;
        try {
          values.push(JSON.parse(line));
        } catch (err) {
          const at = /position (\d+)/.exec((err as Error).message)?.[1];
          if (issues.length < 20) issues.push(`line ${i + 1}: not one JSON value${at ? ` (syntax error at column ${Number(at) + 1})` : ''}`);
        }
      });
      if (issues.length > 0) return { error: 'malformed JSON lines', issues };
      return values.length === 0 ? { error: 'no lines' } : values;
    };
    const byLine = (b: Uint8Array): unknown => {
      try {
        return parseJsonLines(b);
      } catch (err) {
        assert.ok(err instanceof HttpError && err.status === 400);
        if (err.message.startsWith('malformed JSON lines')) return { error: 'malformed JSON lines', issues: err.issues };
        return { error: err.message.startsWith('request body holds no JSON lines') || err.message.startsWith('request body is empty') ? 'no lines' : err.message };
      }
    };
    const line = fc.oneof(
      fc.dictionary(fc.string({ unit: 'grapheme', maxLength: 6 }), fc.jsonValue({ maxDepth: 2 })).map((r) => JSON.stringify(r)),
      fc.constantFrom('', ' ', '\r', '\u00a0', '\ufeff', '\u2028', '{"a":1', '{"é":"😀"}', 'x', '{}{}'),
    );
    fc.assert(fc.property(fc.array(line, { maxLength: 30 }), fc.constantFrom('\n', '\r\n'), fc.constantFrom('', '\ufeff'), fc.boolean(), (lines, eol, bom, badByte) => {
      const b = Buffer.from(`${bom}${lines.join(eol)}`);
      const body = badByte && b.length > 0 ? Buffer.concat([b.subarray(0, b.length >> 1), Buffer.from([0xff]), b.subarray(b.length >> 1)]) : b;
      if (body.length === 0) return;
      assert.deepStrictEqual(byLine(body), whole(body));
    }), { numRuns: 500 });
  });

  it('answers arbitrary bytes with values or a 400, never another error', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), (b) => {
      try {
        parseJsonLines(b);
      } catch (err) {
        assert.ok(err instanceof HttpError && err.status === 400, String(err));
      }
    }));
  });
});
