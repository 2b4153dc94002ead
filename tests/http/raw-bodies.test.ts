import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { fixturePath } from '../helpers/paths.js';
import { startTestInstance, type TestInstance } from '../helpers/instance.js';

type Refused = { index: number; line?: number; issues: string[] };
type Answer = { accepted: Array<{ id: string; attributes: Record<string, unknown> }>; duplicates: number; refused: Refused[] };

const validLines = () => readFileSync(fixturePath('syslog-rfc5424', 'valid.log'), 'utf8').split('\n').filter((l) => l !== '');

describe('raw ingest bodies: text/plain syslog, envelopes, refused records', () => {
  let t: TestInstance;
  before(async () => { t = await startTestInstance(); });
  after(async () => { await t.close(); });

  const post = (path: string, body: string | Uint8Array, type: string, token = t.tokens.ingestor) =>
    t.request(`/api/v1/ingest/${path}`, { method: 'POST', token, body, headers: { 'content-type': type } });

  it('reads text/plain syslog by lines: blank lines skipped, CRLF fine, a bad line refused with its line number', async () => {
    const [a, b] = validLines();
    const body = `${a}\r\n\r\nnot syslog at all\n${b}`;
    const res = await post('syslog-rfc5424', body, 'text/plain');
    assert.equal(res.status, 202, await res.clone().text());
    const answer = await res.json() as Answer;
    assert.equal(answer.accepted.length, 2);
    assert.equal(answer.refused.length, 1);
    assert.equal(answer.refused[0]!.index, 1, 'the second message of the batch');
    assert.equal(answer.refused[0]!.line, 3, 'on the third line of the body');
    assert.match(answer.refused[0]!.issues[0]!, /PRI/);
  });

  it('refuses a line that is not UTF-8 and keeps the others', async () => {
    const [a] = validLines();
    const body = Buffer.concat([Buffer.from(`${a}\n<13>1 - - - - - - caf`), Buffer.from([0xc3, 0x28]), Buffer.from('\n')]);
    const res = await post('syslog-rfc5424', body, 'text/plain');
    assert.equal(res.status, 202);
    const answer = await res.json() as Answer;
    assert.deepEqual(answer.refused, [{ index: 1, line: 2, issues: ['message: not valid UTF-8'] }]);
  });

  it('refuses a line of JSON lines that is not JSON on its own, and keeps the others', async () => {
    const line = (n: number) => JSON.stringify({ message: `<13>1 2026-01-02T03:04:05Z host app - - - json line ${n}` });
    const deep = '['.repeat(80) + ']'.repeat(80);
    const body = `${line(1)}\n{"message": oops}\n\n${deep}\n${line(2)}\n`;
    const res = await post('syslog-rfc5424', body, 'application/x-ndjson');
    assert.equal(res.status, 202, await res.clone().text());
    const answer = await res.json() as Answer;
    assert.deepEqual(answer.accepted.map((e) => e.attributes['MSG']), ['json line 1', 'json line 2']);
    assert.deepEqual(answer.refused.map((r) => [r.index, r.line]), [[1, 2], [2, 4]]);
    assert.match(answer.refused[0]!.issues[0]!, /^record: not one JSON value/);
    assert.match(answer.refused[1]!.issues[0]!, /nesting deeper than 63 levels$/);
    const atomic = await post('syslog-rfc5424?atomic=true', body, 'application/x-ndjson');
    assert.equal(atomic.status, 400);
    assert.deepEqual((await atomic.json() as { issues: string[] }).issues.map((i) => i.slice(0, 12)), ['records[1]: ', 'records[2]: ']);
  });

  it('reads octet-counted frames, and refuses a body whose frames cannot be read', async () => {
    const [a, b] = validLines().map((l) => Buffer.from(l));
    const framed = Buffer.concat([Buffer.from(`${a!.length} `), a!, Buffer.from(`${b!.length} `), b!]);
    const res = await post('syslog-rfc5424', framed, 'text/plain');
    assert.equal(res.status, 202, await res.clone().text());
    const answer = await res.json() as Answer;
    assert.equal(answer.accepted.length, 2);
    assert.deepEqual(answer.refused, []);
    const short = await post('syslog-rfc5424', framed.subarray(0, framed.length - 1), 'text/plain');
    assert.equal(short.status, 400);
    assert.deepEqual((await short.json() as { issues: string[] }).issues, ['(body): the body ends inside a frame']);
    const broken = await post('syslog-rfc5424', Buffer.concat([Buffer.from(`${a!.length} `), a!, Buffer.from('x <13>1 -')]), 'text/plain');
    assert.equal(broken.status, 400);
    assert.match((await broken.json() as { error: string }).error, /octet-counted/);
  });

  it('takes text/plain on syslog-rfc5424 only', async () => {
    const res = await post('linux-journal', 'MESSAGE=x', 'text/plain');
    assert.equal(res.status, 415);
    const other = await post('syslog-rfc5424', 'x', 'application/xml');
    assert.equal(other.status, 415);
    assert.match((await other.json() as { error: string }).error, /text\/plain/);
  });

  it('counts text lines against the batch limit', async () => {
    const small = await startTestInstance({ limits: { recordsPerRequest: 2 } });
    try {
      const res = await small.request('/api/v1/ingest/syslog-rfc5424', { method: 'POST', token: small.tokens.ingestor, body: validLines().slice(0, 3).join('\n'), headers: { 'content-type': 'text/plain' } });
      assert.equal(res.status, 413);
    } finally {
      await small.close();
    }
  });

  it('answers 400 naming every record when none is accepted, with or without atomic', async () => {
    for (const path of ['syslog-rfc5424', 'syslog-rfc5424?atomic=false', 'syslog-rfc5424?atomic=true']) {
      const res = await post(path, 'bad one\nbad two\n', 'text/plain');
      assert.equal(res.status, 400, path);
      const body = await res.json() as { error: string; issues: string[] };
      assert.deepEqual(body.issues.map((i) => i.slice(0, 12)), ['records[0]: ', 'records[1]: ']);
    }
    const res = await post('syslog-rfc5424?atomic=yes', validLines()[0]!, 'text/plain');
    assert.equal(res.status, 400);
    assert.match((await res.json() as { issues: string[] }).issues[0]!, /atomic/);
  });

  it('stores nothing of a mixed batch sent with atomic=true, and exactly the good records without it', async () => {
    const line = (n: number) => `<13>1 2026-01-02T03:04:05Z host app - - - mixed batch message ${n}`;
    const records = [{ message: line(1) }, { message: 42 }, { message: line(2) }, { message: line(3) }];
    const head = t.inst.log.head().seq;
    const atomic = await post('syslog-rfc5424?atomic=true', JSON.stringify(records), 'application/json');
    assert.equal(atomic.status, 400);
    assert.deepEqual((await atomic.json() as { issues: string[] }).issues, ['records[1]: message: expected the syslog message as a string']);
    const rawAfter = () => [...t.inst.log.read(head + 1)].filter((r) => r.type === 'RawRecordsIngested').flatMap((r) => (r.data as { records: unknown[] }).records);
    assert.deepEqual(rawAfter(), [], 'atomic=true stores no record (only the access is audited)');
    const res = await post('syslog-rfc5424', JSON.stringify(records), 'application/json');
    assert.equal(res.status, 202);
    const answer = await res.json() as Answer;
    assert.deepEqual(answer.refused, [{ index: 1, issues: ['message: expected the syslog message as a string'] }]);
    assert.deepEqual(answer.accepted.map((e) => e.attributes['MSG']), [1, 2, 3].map((n) => `mixed batch message ${n}`));
    assert.deepEqual(rawAfter(), [records[0], records[2], records[3]]);
  });

  it('takes an OTLP ExportLogsServiceRequest and a Tailscale response as the whole body', async () => {
    const otlp = readFileSync(fixturePath('opentelemetry-log', 'otlp-constructed-export-request.json'), 'utf8');
    const o = await post('opentelemetry-log', otlp, 'application/json');
    assert.equal(o.status, 202);
    assert.equal((await o.json() as Answer).accepted.length, 6);
    const flows = readFileSync(fixturePath('mesh-vpn-logs', 'network-flow-api-response-constructed.json'), 'utf8');
    const m = await post('mesh-vpn-logs?logType=network', flows, 'application/json');
    assert.equal(m.status, 202);
    const broken = await post('mesh-vpn-logs?logType=network', JSON.stringify({ logs: [{ nodeId: 7 }] }), 'application/json');
    assert.equal(broken.status, 400);
    assert.match((await broken.json() as { issues: string[] }).issues[0]!, /^records\[0\]: logs\[0\]/);
  });

  it('answers arbitrary text/plain bytes with a 202 or a 400 or 413, never another status', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 300 }), async (bytes) => {
        const res = await post('syslog-rfc5424', bytes, 'text/plain');
        assert.ok([202, 400, 413].includes(res.status), `${res.status} ${await res.text()}`);
      }),
      { numRuns: 60 },
    );
  });
});
