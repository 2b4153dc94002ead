import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fixturePath } from '../helpers/paths.js';
import { dnsRule } from '../helpers/event-fixtures.js';
import { startTestInstance, type TestInstance } from '../helpers/instance.js';

type Preview = {
  ruleIds: string[]; scanned: number; matchCount: number; complete: boolean; stoppedBy?: string; resumeAfter?: string;
  matches: Array<{ ruleId: string; kind: string; time: string; eventIds: string[]; detail: { selections?: string[]; value?: number }; event?: { attributes: Record<string, unknown> } }>;
};

const RULE_ID = '3c1d6a7e-8f5b-4a47-9a55-5c0d2f0b7a11';
const CORRELATION = `title: Repeated lookups of one name
id: 7d0c7d53-4a1e-4d7e-9a0f-0d3a4c9e2b10
correlation:
  type: event_count
  rules: [${RULE_ID}]
  group-by: [id.orig_h]
  timespan: 1h
  condition: {gte: 2}
level: high
`;
const RANGE = 'since=2018-03-24T00:00:00Z&until=2018-03-25T00:00:00Z';

describe('rule preview (retro-hunt)', () => {
  let t: TestInstance;
  before(async () => {
    t = await startTestInstance();
    const dns = readFileSync(fixturePath('network-monitor', 'wrccdc-json-streaming', 'dns.jsonl'), 'utf8');
    const res = await t.request('/api/v1/ingest/network-monitor?logType=dns', { method: 'POST', token: t.tokens.ingestor, body: dns, headers: { 'content-type': 'application/x-ndjson' } });
    assert.equal(res.status, 202, await res.clone().text());
  });
  after(async () => { await t.close(); });

  const previewText = (yaml: string, query: string, token = t.tokens.analyst) =>
    t.request(`/api/v1/rules/preview?${query}`, { method: 'POST', token, body: yaml, headers: { 'content-type': 'application/yaml' } });
  const alertCount = async () => ((await (await t.request('/api/v1/alerts', { token: t.tokens.analyst })).json()) as { alerts: unknown[] }).alerts.length;

  it('shows what a rule that is not imported would have matched in stored events, explaining each match, and raises nothing', async () => {
    const res = await previewText(dnsRule(RULE_ID, 'ise.wrccdc.org'), RANGE);
    assert.equal(res.status, 200, await res.clone().text());
    const body = await res.json() as Preview;
    assert.deepEqual(body.ruleIds, [RULE_ID]);
    assert.equal(body.complete, true);
    assert.equal(body.scanned, 5);
    assert.equal(body.matchCount, 2);
    assert.deepEqual(body.matches.map((m) => [m.ruleId, m.kind, m.event?.attributes['query'], m.detail.selections]), [
      [RULE_ID, 'detection', 'ise.wrccdc.org', ['sel']], [RULE_ID, 'detection', 'ise.wrccdc.org', ['sel']],
    ]);
    assert.ok(body.matches.every((m) => m.time.startsWith('2018-03-24T17:15')));
    assert.equal(await alertCount(), 0);
    assert.equal((await t.request(`/api/v1/rules/${RULE_ID}`, { token: t.tokens.analyst })).status, 404);
  });

  it('scans only the time range asked for', async () => {
    const body = await (await previewText(dnsRule(RULE_ID, 'ise.wrccdc.org'), 'since=2018-03-24T17:15:30Z&until=2018-03-25T00:00:00Z')).json() as Preview;
    assert.equal(body.matchCount, 0);
    assert.ok(body.scanned > 0 && body.scanned < 5, String(body.scanned));
  });

  it('stops at the events bound and says where, and returns at most limit matches while counting all', async () => {
    const bounded = await (await previewText(dnsRule(RULE_ID, 'ise.wrccdc.org'), `${RANGE}&maxEvents=2`)).json() as Preview;
    assert.equal(bounded.scanned, 2);
    assert.equal(bounded.complete, false);
    assert.equal(bounded.stoppedBy, 'events');
    assert.match(bounded.resumeAfter!, /^2018-03-24T17:15/);
    const limited = await (await previewText(dnsRule(RULE_ID, 'ise.wrccdc.org'), `${RANGE}&limit=1`)).json() as Preview;
    assert.equal(limited.matchCount, 2);
    assert.equal(limited.matches.length, 1);
  });

  it('previews an installed rule by id, even disabled, and a correlation over it, still raising nothing', async () => {
    const imported = await t.request('/api/v1/rules', { method: 'POST', token: t.tokens.rule_admin, body: dnsRule(RULE_ID, 'ise.wrccdc.org'), headers: { 'content-type': 'application/yaml' } });
    assert.equal(imported.status, 201);
    const off = await t.request(`/api/v1/rules/${RULE_ID}`, { method: 'PATCH', token: t.tokens.rule_admin, body: JSON.stringify({ enabled: false }) });
    assert.equal(off.status, 200);
    const byId = await t.request(`/api/v1/rules/${RULE_ID}/preview?${RANGE}`, { token: t.tokens.viewer });
    assert.equal(byId.status, 200);
    assert.equal((await byId.json() as Preview).matchCount, 2);
    const corr = await (await previewText(CORRELATION, RANGE)).json() as Preview;
    assert.equal(corr.matchCount, 1, JSON.stringify(corr));
    assert.equal(corr.matches[0]!.kind, 'correlation');
    assert.equal(corr.matches[0]!.eventIds.length, 2);
    assert.equal(await alertCount(), 0);
  });

  it('refuses bad rules, bad ranges and callers who may not read events', async () => {
    const bad = await previewText('title: x\nlogsource: {product: zeek, service: dns}\ndetection: {s: {query|bogus: a}, condition: s}\n', RANGE);
    assert.equal(bad.status, 400);
    assert.match(JSON.stringify(await bad.json()), /bogus/);
    assert.equal((await previewText(dnsRule(RULE_ID), 'until=2018-03-25T00:00:00Z')).status, 400);
    assert.equal((await previewText(dnsRule(RULE_ID), 'since=2018-03-25T00:00:00Z&until=2018-03-24T00:00:00Z')).status, 400);
    assert.equal((await previewText(dnsRule(RULE_ID), RANGE, t.tokens.ingestor)).status, 403);
    assert.equal((await t.request(`/api/v1/rules/nope/preview?${RANGE}`, { token: t.tokens.viewer })).status, 404);
  });
});

describe('rule preview of a runaway regular expression', () => {
  // Lookaheads keep V8 from its linear-time fallback: on this value the match backtracks for minutes.
  const RUNAWAY = `title: Runaway
id: 5b0f2f8e-3a4c-4b8e-8f0e-1c2d3e4f5a6b
logsource: {product: zeek, service: dns}
detection:
  sel:
    query|re: '^(a+)+(?=b)'
  condition: sel
`;

  it('stops at the preview time bound in its own worker while the service goes on answering, and runs a bounded number at once', async () => {
    const t = await startTestInstance({ limits: { previewSeconds: 1, previewsAtOnce: 1 } });
    try {
      const dns = readFileSync(fixturePath('network-monitor', 'wrccdc-json-streaming', 'dns.jsonl'), 'utf8').split('\n')[0]!;
      const line = JSON.stringify({ ...JSON.parse(dns) as Record<string, unknown>, uid: 'Crunaway', query: `${'a'.repeat(40)}!` });
      const ingested = await t.request('/api/v1/ingest/network-monitor?logType=dns', { method: 'POST', token: t.tokens.ingestor, body: line, headers: { 'content-type': 'application/x-ndjson' } });
      assert.equal(ingested.status, 202, await ingested.clone().text());

      const started = performance.now();
      const running = t.request(`/api/v1/rules/preview?${RANGE}`, { method: 'POST', token: t.tokens.viewer, body: RUNAWAY, headers: { 'content-type': 'application/yaml' } });
      let previewDone = false;
      void running.then(() => { previewDone = true; });
      // Meanwhile: the service answers, and a second preview is one too many.
      await new Promise((r) => setTimeout(r, 200));
      const health = await t.request('/health');
      assert.equal(health.status, 200);
      assert.equal(previewDone, false, 'the health check was answered while the preview ran');
      const second = await t.request(`/api/v1/rules/preview?${RANGE}`, { method: 'POST', token: t.tokens.viewer, body: RUNAWAY, headers: { 'content-type': 'application/yaml' } });
      assert.equal(second.status, 429);
      assert.ok(Number(second.headers.get('retry-after')) >= 1);

      const res = await running;
      assert.equal(res.status, 200, await res.clone().text());
      const body = await res.json() as Preview;
      assert.equal(body.complete, false);
      assert.equal(body.stoppedBy, 'time');
      assert.equal(body.scanned, 0);
      assert.equal(body.resumeAfter, '2018-03-24T00:00:00Z');
      assert.ok(performance.now() - started < 10_000, `answered after ${Math.round(performance.now() - started)} ms`);

      // Its slot is free again, and a rule that does not run away previews in full.
      const next = await t.request(`/api/v1/rules/preview?${RANGE}`, { method: 'POST', token: t.tokens.viewer, body: dnsRule(RULE_ID, 'ise.wrccdc.org'), headers: { 'content-type': 'application/yaml' } });
      assert.equal(next.status, 200);
      assert.equal((await next.json() as Preview).complete, true);
    } finally {
      await t.close();
    }
  });
});
