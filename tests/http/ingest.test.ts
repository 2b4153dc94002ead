import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fixturePath } from '../helpers/paths.js';
import { startTestInstance, type TestInstance } from '../helpers/instance.js';

type Result = { accepted: Array<{ id: string; category: string; class: string; outcome: string; rawReference: string; source: { adapter: string; instance: string }; entityKeys: string[] }>; alerts: unknown[]; incidents: unknown[] };

const lines = (path: string) => readFileSync(path, 'utf8').split('\n').filter((l) => l.length > 0);
const jsonl = (path: string) => lines(path).map((l) => JSON.parse(l) as unknown);

describe('POST /api/v1/ingest/{normalizer}', () => {
  let t: TestInstance;
  before(async () => { t = await startTestInstance(); });
  after(async () => { await t.close(); });

  const ingest = (path: string, body: unknown) => t.request(`/api/v1/ingest/${path}`, { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify(body) });

  it('accepts every Zeek sample under its log name', async () => {
    for (const folder of ['zeek-docs', 'wrccdc-json-streaming']) {
      const dir = fixturePath('network-monitor', folder);
      for (const file of readdirSync(dir)) {
        const res = await ingest(`network-monitor?logType=${file.replace('.jsonl', '')}`, jsonl(join(dir, file)));
        assert.equal(res.status, 202, `${folder}/${file}: ${await res.clone().text()}`);
        const body = await res.json() as Result;
        assert.ok(body.accepted.every((e) => e.source.adapter === 'network-monitor' && e.source.instance === file.replace('.jsonl', '')));
      }
    }
  });

  it('accepts valid syslog lines and lists invalid ones by index; atomic=true refuses the whole batch', async () => {
    const valid = [...lines(fixturePath('syslog-rfc5424', 'valid.log')), ...lines(fixturePath('syslog-rfc5424', 'constructed-linux-valid.log'))];
    const res = await ingest('syslog-rfc5424', valid.map((message) => ({ message })));
    assert.equal(res.status, 202);
    assert.equal((await res.json() as Result).accepted.length, valid.length);
    const invalid = lines(fixturePath('syslog-rfc5424', 'constructed-linux-invalid.log'));
    const mixed = { records: [{ message: valid[0] }, ...invalid.map((message) => ({ message }))] };
    const partial = await ingest('syslog-rfc5424', mixed);
    assert.equal(partial.status, 202);
    const answer = await partial.json() as Result & { refused: Array<{ index: number; line?: number; issues: string[] }> };
    assert.equal(answer.accepted.length, 1);
    assert.deepEqual(answer.refused.map((r) => r.index), invalid.map((_, n) => n + 1));
    assert.ok(answer.refused.every((r) => r.line === undefined && r.issues.length === 1));
    const bad = await ingest('syslog-rfc5424?atomic=true', mixed);
    assert.equal(bad.status, 400);
    const issues = (await bad.json() as { issues: string[] }).issues;
    assert.equal(issues.length, invalid.length);
    assert.ok(issues.every((i, n) => i.startsWith(`records[${n + 1}]: `)), issues.join('\n'));
    assert.match(issues.join('\n'), /records\[\d+\]: (PRI|VERSION|TIMESTAMP|HOSTNAME|STRUCTURED-DATA|MSG)/);
  });

  it('accepts journal, OTLP and Tailscale samples', async () => {
    const journal = readdirSync(fixturePath('linux-journal')).flatMap((f) => jsonl(fixturePath('linux-journal', f)))
      .filter((r) => typeof r === 'object' && r !== null && ('__REALTIME_TIMESTAMP' in r || '_SOURCE_REALTIME_TIMESTAMP' in r));
    const j = await ingest('linux-journal', journal);
    assert.equal(j.status, 202, await j.clone().text());
    const otlp = JSON.parse(readFileSync(fixturePath('opentelemetry-log', 'otlp-constructed-export-request.json'), 'utf8')) as unknown;
    const o = await ingest('opentelemetry-log', [otlp]);
    assert.equal(o.status, 202);
    assert.equal((await o.json() as Result).accepted.length, 6);
    const flows = await ingest('mesh-vpn-logs?logType=network&meshnet=example.ts.net', jsonl(fixturePath('mesh-vpn-logs', 'network-flow-records-constructed.jsonl')));
    assert.equal(flows.status, 202);
    const flowEvents = (await flows.json() as Result).accepted;
    assert.ok(flowEvents.length > 4 && flowEvents.every((e) => e.class === 'network_flow'));
    const audit = await ingest('mesh-vpn-logs?logType=configuration', jsonl(fixturePath('mesh-vpn-logs', 'audit-stream-panther-tests.jsonl')));
    assert.equal(audit.status, 202);
    const graph = await (await t.request('/api/v1/graph?entity=meshnet:example.ts.net', { token: t.tokens.viewer })).json() as { relationships: Array<{ type: string }> };
    assert.ok(graph.relationships.some((r) => r.type === 'member_of'));
  });

  it('keeps the raw record in the log, addressed by rawReference, and is idempotent', async () => {
    const record = { ts: 1591367999.305988, uid: 'CIdem1', 'id.orig_h': '192.168.4.76', 'id.orig_p': 36844, 'id.resp_h': '192.168.4.1', 'id.resp_p': 53, proto: 'udp', conn_state: 'SF' };
    const first = await (await ingest('network-monitor?logType=conn', [record])).json() as Result;
    const e = first.accepted[0]!;
    assert.equal(e.category, 'network');
    const stored = [...t.inst.log.read(1)].filter((r) => r.type === 'RawRecordsIngested').map((r) => r.data as { records: unknown[]; events: Array<{ id: string }> })
      .find((d) => d.events.some((x) => x.id === e.id))!;
    assert.deepEqual(stored.records, [record]);
    assert.match(e.rawReference, /^raw:sha256:[0-9a-f]{64}$/);
    const head = t.inst.log.head().seq;
    t.setNow('2026-11-22T10:05:00Z');
    const again = await (await ingest('network-monitor?logType=conn', [record])).json() as Result;
    assert.equal(again.accepted[0]!.id, e.id);
    const added = [...t.inst.log.read(head + 1)].filter((r) => r.type === 'RawRecordsIngested');
    assert.equal(added.length, 0, 're-ingesting the same raw record stores nothing new');
  });

  it('refuses unknown normalizers and missing or unknown logTypes with the accepted values', async () => {
    let res = await ingest('splunk', [{}]);
    assert.equal(res.status, 400);
    assert.match((await res.json() as { issues: string[] }).issues[0]!, /network-monitor, syslog-rfc5424, opentelemetry-log, mesh-vpn-logs, linux-journal/);
    res = await ingest('mesh-vpn-logs', [{}]);
    assert.match((await res.json() as { issues: string[] }).issues[0]!, /logType: required for mesh-vpn-logs; accepted: network, configuration/);
    res = await ingest('mesh-vpn-logs?logType=dns', [{}]);
    assert.equal(res.status, 400);
    res = await ingest('network-monitor', [{}]);
    assert.equal(res.status, 400);
    assert.deepEqual((await res.json() as { issues: string[] }).issues, ['records[0]: logType: required (the Zeek log name, e.g. conn)']);
    res = await ingest('network-monitor?logType=Bad%20Name', [{}]);
    assert.equal(res.status, 400);
    res = await ingest('linux-journal?logType=x', [{}]);
    assert.equal(res.status, 400);
  });

  it('never answers 500 to arbitrary records', async () => {
    const junk = [null, 1, 'x', [], { ts: 'nope' }, { message: 42 }, { resourceLogs: 'x' }, { __REALTIME_TIMESTAMP: {} }, { logs: [null] }];
    for (const path of ['network-monitor?logType=conn', 'syslog-rfc5424', 'opentelemetry-log', 'mesh-vpn-logs?logType=network', 'linux-journal']) {
      for (const record of junk) {
        const res = await ingest(path, [record]);
        assert.ok(res.status === 202 || res.status === 400, `${path} ${JSON.stringify(record)}: ${res.status}`);
      }
    }
  });
});
