import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startTestInstance } from '../helpers/instance.js';

/** One sample of the Prometheus text exposition format 0.0.4. */
interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** A parsed exposition: metric families with their HELP, TYPE and samples. */
interface Family {
  help?: string;
  type?: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/** Reads `{a="x",b="y"}` strictly (escapes \\\\, \\" and \\n only); returns the labels and the rest of the line. */
function parseLabels(text: string, line: number): [Record<string, string>, string] {
  const labels: Record<string, string> = {};
  let i = 1;
  while (text[i] !== '}') {
    const eq = text.indexOf('=', i);
    const name = text.slice(i, eq);
    assert.match(name, LABEL_NAME, `line ${line}: label name`);
    assert.equal(text[eq + 1], '"', `line ${line}: quoted label value`);
    let value = '';
    let j = eq + 2;
    for (; text[j] !== '"'; j++) {
      assert.ok(j < text.length, `line ${line}: unterminated label value`);
      if (text[j] === '\\') {
        const next = text[++j];
        assert.ok(next === '\\' || next === '"' || next === 'n', `line ${line}: bad escape`);
        value += next === 'n' ? '\n' : next;
      } else value += text[j];
    }
    assert.ok(!(name in labels), `line ${line}: duplicate label ${name}`);
    labels[name] = value;
    i = j + 1;
    if (text[i] === ',') i++;
    else assert.equal(text[i], '}', `line ${line}: expected , or }`);
  }
  return [labels, text.slice(i + 1)];
}

/** A strict parser of the text format: every line a comment, HELP, TYPE or sample; families contiguous. */
function parseExposition(text: string): Map<string, Family> {
  assert.ok(text.endsWith('\n'), 'ends with a newline');
  const families = new Map<string, Family>();
  const familyOf = (sample: string) => [...families.keys()].find((f) => sample === f || ['_bucket', '_sum', '_count', '_total', '_created'].some((s) => sample === f + s));
  text.slice(0, -1).split('\n').forEach((raw, index) => {
    const line = index + 1;
    if (raw === '') return;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(raw);
    if (meta) {
      const [, kind, name, rest] = meta;
      assert.match(name!, NAME, `line ${line}: metric name`);
      const f = families.get(name!) ?? { samples: [] };
      families.set(name!, f);
      if (kind === 'HELP') f.help = rest;
      else {
        assert.ok(TYPES.has(rest!), `line ${line}: type ${rest}`);
        assert.equal(f.samples.length, 0, `line ${line}: TYPE before samples`);
        f.type = rest;
      }
      return;
    }
    if (raw.startsWith('#')) return;
    const nameEnd = raw.search(/[{ ]/);
    const name = raw.slice(0, nameEnd);
    assert.match(name, NAME, `line ${line}: sample name`);
    let [labels, rest] = raw[nameEnd] === '{' ? parseLabels(raw.slice(nameEnd), line) : [{}, raw.slice(nameEnd)];
    const parts = rest.trim().split(' ');
    assert.ok(parts.length === 1 || parts.length === 2, `line ${line}: value [timestamp]`);
    const value = parts[0] === '+Inf' ? Infinity : parts[0] === '-Inf' ? -Infinity : parts[0] === 'NaN' ? NaN : Number(parts[0]);
    assert.ok(parts[0] !== '' && (Number.isFinite(value) || ['+Inf', '-Inf', 'NaN'].includes(parts[0]!)), `line ${line}: value ${parts[0]}`);
    const family = familyOf(name);
    assert.ok(family, `line ${line}: sample ${name} without HELP/TYPE`);
    families.get(family)!.samples.push({ name, labels, value });
  });
  return families;
}

const value = (f: Map<string, Family>, family: string, name: string, labels: Record<string, string>) =>
  f.get(family)?.samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value;

describe('GET /metrics', () => {
  it('is valid Prometheus text with the documented families, and counts ingestion by route and normalizer', async () => {
    const t = await startTestInstance();
    try {
      const body = [{ __REALTIME_TIMESTAMP: '1700000000000000', MESSAGE: 'sshd[1]: Accepted password for bob from 198.51.100.7 port 22 ssh2', _HOSTNAME: 'h1' }];
      assert.equal((await t.request('/api/v1/ingest/linux-journal', { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify(body) })).status, 202);
      assert.equal((await t.request('/api/v1/ingest/linux-journal', { method: 'POST', token: t.tokens.ingestor, body: JSON.stringify([{ nope: true }]) })).status, 400);
      const res = await t.request('/metrics', { token: t.tokens.viewer });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
      const text = await res.text();
      const families = parseExposition(text);
      for (const name of ['vigil_ingest_events_total', 'vigil_writer_batch_records', 'vigil_writer_commit_seconds', 'vigil_ingest_queue', 'vigil_log_head_seq', 'vigil_log_bytes',
        'vigil_read_side_lag_records', 'vigil_alerts_open', 'vigil_alert_system_links', 'vigil_collectors', 'vigil_syslog_messages_total', 'vigil_syslog_connections', 'vigil_http_request_duration_seconds']) {
        assert.ok(families.has(name), `family ${name}`);
        assert.ok(families.get(name)!.type && families.get(name)!.help, `${name} has HELP and TYPE`);
      }
      assert.equal(value(families, 'vigil_ingest_events_total', 'vigil_ingest_events_total', { route: '/api/v1/ingest/{normalizer}', normalizer: 'linux-journal', outcome: 'accepted' }), 1);
      assert.equal(value(families, 'vigil_ingest_events_total', 'vigil_ingest_events_total', { route: '/api/v1/ingest/{normalizer}', normalizer: 'linux-journal', outcome: 'rejected' }), 1);
      assert.equal(value(families, 'vigil_http_request_duration_seconds', 'vigil_http_request_duration_seconds_count', { method: 'POST', route: '/api/v1/ingest/{normalizer}', status: '2xx' }), 1);
      assert.equal(value(families, 'vigil_http_request_duration_seconds', 'vigil_http_request_duration_seconds_count', { method: 'POST', route: '/api/v1/ingest/{normalizer}', status: '4xx' }), 1);
      assert.equal(value(families, 'vigil_ingest_queue', 'vigil_ingest_queue', { unit: 'requests' }), 0);
      assert.equal(value(families, 'vigil_alerts_open', 'vigil_alerts_open', { severity: '0' }), 0);
      assert.equal(value(families, 'vigil_collectors', 'vigil_collectors', { last_seen: 'never' }), 0);
      assert.equal(value(families, 'vigil_alert_system_links', 'vigil_alert_system_links', { kind: 'kept' }), 0);
      assert.equal(value(families, 'vigil_alert_system_links', 'vigil_alert_system_links', { kind: 'limit' }), 1_000_000);
      // No label carries a token, an event value or anything the client sent.
      for (const secret of [t.tokens.ingestor, t.tokens.viewer, 'bob', '198.51.100.7', 'nope']) assert.ok(!text.includes(secret), `exposition leaks ${secret}`);
      const labelValues = new Set([...families.values()].flatMap((f) => f.samples.flatMap((s) => Object.entries(s.labels).filter(([k]) => k !== 'le' && k !== 'quantile').map(([k, v]) => `${k}=${v}`))));
      for (const lv of labelValues) assert.match(lv, /^(route=\/[\w/{}.-]*|normalizer=[a-z0-9-]+|outcome=[a-z_]+|method=[A-Z]+|status=[1-5]xx|unit=[a-z]+|severity=\d+|kind=(kept|limit)|last_seen=[a-z0-9_]+|listener=[a-z0-9_-]+|reason=[a-z_]+)$/, lv);
    } finally {
      await t.close();
    }
  });

  it('answers a loopback scrape without credentials only with server.allowLoopbackMetrics, and nothing else', async () => {
    const off = await startTestInstance();
    const on = await startTestInstance({ server: { allowLoopbackMetrics: true } });
    try {
      off.setPeer('127.0.0.1');
      assert.equal((await off.request('/metrics')).status, 401);
      on.setPeer('127.0.0.1');
      assert.equal((await on.request('/metrics')).status, 200);
      assert.equal((await on.request('/api/v1/me')).status, 401, 'the loopback scraper reads metrics and nothing else');
      assert.equal((await on.request('/api/v1/events')).status, 401);
      assert.equal((await on.request('/metrics', { headers: { 'x-forwarded-for': '203.0.113.9' } })).status, 401, 'not through a proxy');
      on.setPeer('192.0.2.10');
      assert.equal((await on.request('/metrics')).status, 401, 'not from another address');
      on.setPeer('127.0.0.1');
      assert.equal((await on.request('/metrics', { token: on.tokens.ingestor })).status, 403, 'a credential that lacks the permission is not overridden by loopback');
    } finally {
      await off.close();
      await on.close();
    }
  });
});
