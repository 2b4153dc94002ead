import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { basename } from 'node:path';
import * as v from 'valibot';
import { NORMALIZERS } from '../../src/normalizers/registry.js';
import { eventsOfRecord } from '../../src/events/record-types.js';
import { ConsoleViewSchema, type ConsoleView } from '../../src/projections/console-query.js';
import { fixturePath } from '../helpers/paths.js';
import { makeEvent, startTestInstance, type TestInstance } from '../helpers/instance.js';

/** One fixture file of a normalizer, read as the records its route takes. */
interface Sample { normalizer: string; logType?: string; file: string; records: unknown[] }

const jsonl = (path: string) => readFileSync(path, 'utf8').split('\n').filter((l) => l.trim() !== '').flatMap((l) => { try { return [JSON.parse(l) as unknown]; } catch { return []; } });
const files = (...dir: string[]) => readdirSync(fixturePath(...dir)).map((f) => fixturePath(...dir, f));

/** Every sample of every normalizer in tests/fixtures (refused records are dropped later, by the normalizer itself). */
function samples(): Sample[] {
  const out: Sample[] = [];
  for (const f of files('linux-journal')) out.push({ normalizer: 'linux-journal', file: f, records: jsonl(f) });
  for (const dir of ['zeek-docs', 'wrccdc-json-streaming']) {
    for (const f of files('network-monitor', dir)) out.push({ normalizer: 'network-monitor', logType: basename(f, '.jsonl'), file: f, records: jsonl(f) });
  }
  for (const f of files('mesh-vpn-logs')) {
    const logType = basename(f).startsWith('network') ? 'network' : 'configuration';
    out.push({ normalizer: 'mesh-vpn-logs', logType, file: f, records: f.endsWith('.json') ? [JSON.parse(readFileSync(f, 'utf8'))] : jsonl(f) });
  }
  for (const f of files('opentelemetry-log')) out.push({ normalizer: 'opentelemetry-log', file: f, records: f.endsWith('.json') ? [JSON.parse(readFileSync(f, 'utf8'))] : jsonl(f) });
  for (const f of files('syslog-rfc5424').filter((x) => x.endsWith('.log'))) {
    out.push({ normalizer: 'syslog-rfc5424', file: f, records: readFileSync(f, 'utf8').split('\n').filter((l) => l !== '').map((message) => ({ message })) });
  }
  return out;
}

type Path = Array<string | number>;
function stringLeaves(value: unknown, path: Path = [], out: Path[] = []): Path[] {
  if (typeof value === 'string') out.push(path);
  else if (Array.isArray(value)) value.forEach((x, i) => stringLeaves(x, [...path, i], out));
  else if (value !== null && typeof value === 'object') for (const [k, x] of Object.entries(value)) stringLeaves(x, [...path, k], out);
  return out;
}
function withLeaf(root: unknown, path: Path, f: (s: string) => string): unknown {
  const copy = structuredClone(root) as Record<string | number, unknown>;
  let at = copy;
  for (const k of path.slice(0, -1)) at = at[k] as Record<string | number, unknown>;
  at[path.at(-1)!] = f(at[path.at(-1)!] as string);
  return copy;
}

let counter = 0;
/** A raw value marker (`vgmk12x`) and a raw key marker (`vgmkkey12`): unique, and found nowhere else. */
const valueMark = () => `vgmk${++counter}x`;
const keyMark = () => `vgmkkey${++counter}`;

/**
 * The record with as many raw values marked as the normalizer still accepts with the same number of
 * events (a marked timestamp or address may be refused; a hostname, message or attribute is not),
 * plus a key of our own. Undefined when the normalizer refuses the record as it is.
 */
function marked(s: Sample, record: unknown): unknown {
  const n = NORMALIZERS.get(s.normalizer)!;
  const ctx = { ingestedAt: '2026-11-22T10:00:00.000Z', ...(s.logType ? { logType: s.logType } : {}) };
  const events = (r: unknown) => { const res = n.normalize(r, ctx); return res.ok ? res.events.length : -1; };
  const want = events(record);
  if (want <= 0) return undefined;
  let current = record;
  if (current !== null && typeof current === 'object' && !Array.isArray(current)) {
    const withKey = { ...current, [keyMark()]: valueMark() };
    if (events(withKey) === want) current = withKey;
  }
  for (const path of stringLeaves(current)) {
    const candidate = withLeaf(current, path, (x) => `${x} ${valueMark()}`);
    if (events(candidate) === want) current = candidate;
  }
  return current;
}

const RULES = `title: Marked DNS query
id: 7e0f5a10-0000-4000-8000-000000000001
logsource: {product: zeek, service: dns}
detection:
  sel:
    query|contains: vgmk
  condition: sel
level: high
---
title: Marked Linux message
id: 7e0f5a10-0000-4000-8000-000000000002
logsource: {product: linux}
detection:
  keywords: [vgmk]
  condition: keywords
level: medium
---
title: Marked OpenTelemetry record
id: 7e0f5a10-0000-4000-8000-000000000003
logsource: {product: opentelemetry}
detection:
  keywords: [vgmk]
  condition: keywords
level: low
`;

describe('the console projection', () => {
  let t: TestInstance;
  let view: ConsoleView;
  let text: string;
  before(async () => {
    t = await startTestInstance({}, { builtinRules: true });
    const imported = await t.request('/api/v1/rules', { method: 'POST', token: t.tokens.rule_admin, body: RULES, headers: { 'content-type': 'application/yaml' } });
    assert.equal(imported.status, 201, await imported.clone().text());
    for (const s of samples()) {
      const records = s.records.map((r) => marked(s, r)).filter((r) => r !== undefined);
      for (let i = 0; i < records.length; i += 200) {
        const res = await t.request(`/api/v1/ingest/${s.normalizer}${s.logType ? `?logType=${s.logType}` : ''}`, { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify(records.slice(i, i + 200)) });
        assert.equal(res.status, 202, `${s.file}: ${await res.clone().text()}`);
      }
    }
    // Normalized events posted as they are: every optional field marked, rawReference included.
    const posted = Array.from({ length: 5 }, (_, i) => makeEvent({
      id: `posted-${i}`, rawReference: `file:///var/log/${valueMark()}#${i}`, actor: { user: valueMark() }, service: { name: valueMark() },
      attributes: { [keyMark()]: valueMark(), message: `Failed password ${valueMark()}` }, correlation: { trace: valueMark() },
    }));
    const res = await t.request('/api/v1/events', { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify(posted) });
    assert.equal(res.status, 202, await res.clone().text());
    // An analyst's work shows too: an assignee.
    const someAlert = (await (await t.request('/api/v1/alerts?limit=1', { token: t.tokens.analyst })).json() as { alerts: Array<{ id: string }> }).alerts[0]!;
    assert.equal((await t.request(`/api/v1/alerts/${someAlert.id}/assignee`, { method: 'PUT', token: t.tokens.analyst, body: JSON.stringify({ assignee: 'analyst-user' }) })).status, 200);
    const answer = await t.request('/api/v1/console', { token: t.tokens.console });
    assert.equal(answer.status, 200, await answer.clone().text());
    text = await answer.text();
    view = JSON.parse(text) as ConsoleView;
  });
  after(async () => { await t.close(); });

  it('has the shape its OpenAPI schema publishes', () => {
    v.parse(ConsoleViewSchema, view);
  });

  it('holds the raw markers in the log (so their absence from the console means something)', () => {
    const stored = JSON.stringify([...t.inst.log.read(1)].map((r) => r.data));
    assert.match(stored, /vgmkkey\d+/, 'raw keys reached the stored events');
    assert.ok((stored.match(/vgmk\d+x/g) ?? []).length > 1000, 'raw values reached the stored events');
  });

  it('shows no raw key and no rawReference of any stored event, anywhere', () => {
    assert.doesNotMatch(text, /vgmkkey/);
    const refs = new Set([...t.inst.log.read(1)].flatMap((r) => eventsOfRecord(r)).map((e) => e.rawReference).filter((r): r is string => typeof r === 'string'));
    assert.ok(refs.size > 100, `rawReferences were stored (${refs.size})`);
    for (const ref of refs) assert.ok(!text.includes(ref), `rawReference ${ref} appears in the console`);
  });

  it('shows no raw value outside the names of affected systems and of systems reporting', () => {
    const names = structuredClone(view);
    for (const a of names.alerts.items) a.affectedSystems = [];
    for (const i of names.incidents.items) i.affectedSystems = [];
    for (const s of names.systems.items) s.name = '';
    const leaks = JSON.stringify(names).match(/[^"]{0,40}vgmk\d+x[^"]{0,40}/g) ?? [];
    assert.deepEqual(leaks, []);
  });

  it('names alerts by title, rule, severity, status, assignee and affected systems, while their detail does hold the raw values', async () => {
    const marked = view.alerts.items.filter((a) => a.title.startsWith('Marked'));
    assert.ok(marked.length >= 2, `alerts of the marker rules are listed (${marked.map((a) => a.title).join(', ')})`);
    const dns = marked.find((a) => a.title === 'Marked DNS query');
    assert.ok(dns, 'the DNS marker rule fired');
    const detail = await (await t.request(`/api/v1/alerts/${dns.id}`, { token: t.tokens.viewer })).text();
    assert.match(detail, /vgmk\d+x/, 'the alert detail (not the console) shows the matched raw value');
    assert.ok(view.alerts.items.some((a) => a.assignee === 'analyst-user'));
    const total = Object.values(view.alerts.byStatus).reduce((a, b) => a + b, 0);
    assert.equal(total, view.alerts.total);
    assert.equal(Object.values(view.alerts.openBySeverity).reduce((a, b) => a + b, 0), view.alerts.byStatus.open! + view.alerts.byStatus.in_review!);
  });

  it('lists the systems reporting with their last report, and every source with its rates', () => {
    assert.ok(view.systems.total > 5);
    assert.ok(view.systems.items.every((s) => s.lastReportAt === '2026-11-22T10:00:00.000Z' && s.live));
    assert.deepEqual(view.sources.map((s) => s.adapter), ['linux-journal', 'mesh-vpn-logs', 'network-monitor', 'opentelemetry-log', 'syslog-rfc5424', 'test'], 'every normalizer and the posted events, and not the instance\'s own access events');
    for (const s of view.sources) {
      assert.equal(s.perHour.length, 24);
      assert.equal(s.perHour.at(-1), s.eventsLastHour, 'the current hour is the last bucket');
      assert.equal(s.events24h, s.events, 'everything arrived within the day');
    }
  });

  it('summarizes the detection plan and says the instance is not a managed deployment', () => {
    const p = view.detectionPlan.summary;
    assert.ok(p.rules >= 3);
    assert.equal(p.ready + p.degraded + p.blocked + p.disabled, p.rules);
    assert.equal(view.deployment.state, 'not_configured');
    assert.equal(view.deployment.centralMissing.recoveryAction, null);
  });

  it('is also served, unsupported, at the legacy /api/snapshot with deprecation headers', async () => {
    const res = await t.request('/api/snapshot', { token: t.tokens.console });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('deprecation') ?? '', /^@\d+$/);
    assert.match(res.headers.get('warning') ?? '', /^299 vigil "unsupported/);
    assert.equal(res.headers.get('link'), '</api/v1/console>; rel="successor-version"');
    v.parse(ConsoleViewSchema, await res.json());
  });

  it('is refused to roles that do not read it', async () => {
    assert.equal((await t.request('/api/v1/console', { token: t.tokens.ingestor })).status, 403);
    assert.equal((await t.request('/api/v1/console', { token: t.tokens.rule_admin })).status, 403);
    assert.equal((await t.request('/api/v1/console', { token: t.tokens.viewer })).status, 200);
  });
});
