import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decideFeedUpdate, INDICATORS_PER_RECORD } from '../../src/commands/intel-feeds.js';
import { THREAT_INTEL_RULE } from '../../src/commands/alerting/intel-alerts.js';
import type { Indicator } from '../../src/detection/intel/types.js';
import type { EventData } from '../../src/events/union.js';
import { intelProjection } from '../../src/projections/intel.js';
import { memoryModels, spec } from '../helpers/decider-spec.js';
import { startTestInstance, type TestInstance } from '../helpers/instance.js';

const NOW = '2026-11-22T10:00:00.000Z';
const domain = (i: number, over: Partial<Indicator> = {}): Indicator => ({ id: `indicator--d${i}`, anyOf: [[{ type: 'domain', value: `evil-${i}.example` }]], source: `[domain-name:value = 'evil-${i}.example']`, ...over });
const update = (indicators: Indicator[], mode: 'merge' | 'replace' = 'merge', version = 'v1') => ({ feed: 'f', kind: 'posted' as const, version, set: { indicators, unsupported: [{ id: 'indicator--x', source: "[x509-certificate:issuer = 'CN=A']", reason: 'x509-certificate is not evaluated' }] }, mode });
const feed = spec((m, u: ReturnType<typeof update>) => decideFeedUpdate(m.intel, u, NOW));

describe('a feed update', () => {
  it('adds new indicators in records of INDICATORS_PER_RECORD, then one summary with the unsupported ones', () => {
    const many = Array.from({ length: INDICATORS_PER_RECORD + 5 }, (_, i) => domain(i));
    feed.given([]).when(update(many)).thenAccepts((events, r) => {
      assert.deepEqual(events.map((e) => e.type), ['IntelIndicatorsChanged', 'IntelIndicatorsChanged', 'IntelFeedUpdated']);
      assert.equal((events[1]!.data as EventData<'IntelIndicatorsChanged'>).added.length, 5);
      const s = events[2]!.data as EventData<'IntelFeedUpdated'>;
      assert.deepEqual([s.added, s.removed, s.total, s.unsupportedCount], [INDICATORS_PER_RECORD + 5, 0, INDICATORS_PER_RECORD + 5, 1]);
      assert.match(s.unsupported[0]!.reason, /x509/);
      assert.equal(r.changed, true);
    });
  });

  it('says nothing for the same indicators and version; adds only what changed; replace removes what left', () => {
    const first = feed.given([]).when(update([domain(1), domain(2)])).thenAccepts(() => {});
    feed.given(first.events).when(update([domain(1), domain(2)])).then([], { feed: 'f', version: 'v1', changed: false, added: 0, removed: 0, expired: 0, total: 2, unsupported: update([]).set.unsupported, unsupportedCount: 1, addedIndicators: [] });
    feed.given(first.events).when(update([domain(2, { confidence: 90 }), domain(3)], 'merge', 'v2')).thenAccepts((events) => {
      const c = events[0]!.data as EventData<'IntelIndicatorsChanged'>;
      assert.deepEqual(c.added.map((i) => i.id), ['indicator--d2', 'indicator--d3']);
      assert.deepEqual(c.removed, []);
      assert.equal((events.at(-1)!.data as EventData<'IntelFeedUpdated'>).total, 3);
    });
    feed.given(first.events).when(update([domain(2)], 'replace', 'v2')).thenAccepts((events) => {
      const c = events[0]!.data as EventData<'IntelIndicatorsChanged'>;
      assert.deepEqual([c.added, c.removed], [[], ['indicator--d1']]);
      assert.equal((events.at(-1)!.data as EventData<'IntelFeedUpdated'>).total, 1);
    });
  });

  it('folds into the index, and restores from a snapshot to the same matches with the version that carried each', () => {
    const models = memoryModels();
    const one = feed.given([]).when(update([domain(1)])).thenAccepts(() => {});
    const two = feed.given(one.events).when(update([domain(2)], 'merge', 'v2')).thenAccepts(() => {});
    models.append([...one.events, ...two.events]);
    const event = (name: string) => ({ schemaVersion: 1, id: name, category: 'network', class: 'dns_query', activity: 'query', outcome: 'success', time: NOW, ingestedAt: NOW, source: { adapter: 'network-monitor', instance: 'dns', recordId: name }, entityKeys: [], attributes: { query: name } }) as never;
    const versions = (s: typeof models.intel) => ['a.evil-1.example', 'evil-2.example'].map((q) => s.index.match(event(q), Date.parse(NOW)).map((m) => m.version));
    assert.deepEqual(versions(models.intel), [['v1'], ['v2']]);
    const restored = intelProjection.restore!(structuredClone(intelProjection.snapshot!(models.intel)));
    assert.deepEqual(versions(restored), [['v1'], ['v2']]);
    assert.deepEqual(intelProjection.snapshot!(restored), intelProjection.snapshot!(models.intel));
  });
});

describe('POST /api/v1/intel/bundles and a threat-intel match on ingest', () => {
  let t: TestInstance;
  before(async () => { t = await startTestInstance(); });
  after(() => t.close());

  const bundle = {
    type: 'bundle', id: 'bundle--5d0092c5-5f74-4287-9642-33f4c354e56d',
    objects: [
      { type: 'indicator', spec_version: '2.1', id: 'indicator--a', created: '2015-05-15T09:12:16.432Z', modified: '2015-05-15T09:12:16.432Z', name: 'C2 domain', pattern_type: 'stix', pattern: "[domain-name:value = 'hugesoft.org']", valid_from: '2015-05-15T09:12:16.432Z', confidence: 80 },
      { type: 'indicator', spec_version: '2.1', id: 'indicator--b', created: '2015-05-15T09:12:16.432Z', modified: '2015-05-15T09:12:16.432Z', pattern_type: 'stix', pattern: "[ipv4-addr:value = '223.166.0.0/15']", valid_from: '2015-05-15T09:12:16.432Z', valid_until: '2026-11-22T09:30:00Z' },
      { type: 'indicator', spec_version: '2.1', id: 'indicator--c', created: '2015-05-15T09:12:16.432Z', modified: '2015-05-15T09:12:16.432Z', pattern_type: 'stix', pattern: "[x509-certificate:issuer = 'CN=WEBMAIL']", valid_from: '2015-05-15T09:12:16.432Z' },
      { type: 'intrusion-set', spec_version: '2.1', id: 'intrusion-set--1', created: '2015-05-15T09:12:16.432Z', modified: '2015-05-15T09:12:16.432Z', name: 'APT1' },
      { type: 'relationship', spec_version: '2.1', id: 'relationship--1', created: '2015-05-15T09:12:16.432Z', modified: '2015-05-15T09:12:16.432Z', relationship_type: 'indicates', source_ref: 'indicator--a', target_ref: 'intrusion-set--1' },
    ],
  };

  it('takes a bundle (listing what it cannot evaluate), shows the feed, and a DNS query for its domain raises an explained alert', async () => {
    const posted = await t.request('/api/v1/intel/bundles?feed=apt1', { method: 'POST', token: t.tokens.rule_admin, body: JSON.stringify(bundle) });
    assert.equal(posted.status, 200, await posted.clone().text());
    const r = (await posted.json()) as { added: number; total: number; unsupported: Array<{ id: string; reason: string }> };
    assert.deepEqual([r.added, r.total, r.unsupported.map((u) => u.id)], [2, 2, ['indicator--c']]);
    assert.equal((await t.request('/api/v1/intel/bundles', { method: 'POST', token: t.tokens.analyst, body: JSON.stringify(bundle) })).status, 403);
    assert.equal((await t.request('/api/v1/intel/bundles', { method: 'POST', token: t.tokens.rule_admin, body: JSON.stringify({ type: 'report' }) })).status, 400);
    const feeds = (await (await t.request('/api/v1/intel/feeds', { token: t.tokens.viewer })).json()) as { feeds: Array<{ name: string; total: number; unsupportedCount: number }>; indicators: number };
    assert.deepEqual(feeds.feeds.map((f) => [f.name, f.total, f.unsupportedCount]), [['apt1', 2, 1]]);
    assert.equal(feeds.indicators, 2);

    const zeek = (logType: string, records: unknown[]) => t.request(`/api/v1/ingest/network-monitor?logType=${logType}`, { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify(records) });
    // 2026-11-22T09:20Z: the /15 is still valid then (valid_until 09:30); at 09:40 it is not.
    const dns = { ts: 1_795_339_200, uid: 'Cdns1', 'id.orig_h': '10.0.0.5', 'id.orig_p': 53000, 'id.resp_h': '10.0.0.53', 'id.resp_p': 53, proto: 'udp', query: 'www.hugesoft.org', qtype_name: 'A' };
    const conn = (ts: number, uid: string) => ({ ts, uid, 'id.orig_h': '10.0.0.5', 'id.orig_p': 50000, 'id.resp_h': '223.167.4.4', 'id.resp_p': 443, proto: 'tcp' });
    const answer = (await (await zeek('dns', [dns])).json()) as { alerts: Array<{ id: string; ruleId: string; title: string }> };
    const alert = answer.alerts.find((a) => a.ruleId === THREAT_INTEL_RULE)!;
    assert.ok(alert, JSON.stringify(answer.alerts));
    assert.match(alert.title, /threat-intel match: C2 domain \(apt1\)/);
    const detail = (await (await t.request(`/api/v1/alerts/${alert.id}`, { token: t.tokens.analyst })).json()) as { matchReason: { intel: Record<string, unknown> } };
    const why = detail.matchReason.intel;
    assert.equal(why['indicator'], 'indicator--a');
    assert.equal(why['feed'], 'apt1');
    assert.match(String(why['version']), /^sha256:[0-9a-f]{64}$/);
    assert.equal(why['confidence'], 80);
    assert.deepEqual(why['related'], [{ type: 'intrusion-set', name: 'APT1', id: 'intrusion-set--1' }]);
    assert.deepEqual((why['fields'] as Array<{ field: string; value: string }>).map((f) => [f.field, f.value]), [['query', 'www.hugesoft.org']]);
    // The address range: valid at 09:20, no longer at 09:40 (the event's time decides, not the ingest's).
    const early = (await (await zeek('conn', [conn(1_795_339_200, 'Cc1')])).json()) as { alerts: Array<{ ruleId: string }> };
    assert.equal(early.alerts.filter((a) => a.ruleId === THREAT_INTEL_RULE).length, 1);
    const late = (await (await zeek('conn', [conn(1_795_340_400, 'Cc2')])).json()) as { alerts: Array<{ ruleId: string }> };
    assert.equal(late.alerts.filter((a) => a.ruleId === THREAT_INTEL_RULE).length, 0);
  });
});
