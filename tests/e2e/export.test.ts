import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import { mkdirSync, readFileSync, readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { runCli, startServe, writeTestConfig, type ServeProcess } from '../helpers/cli.js';
import { WEBSHELL_RULE } from '../helpers/event-fixtures.js';
import { tempDir } from '../helpers/temp.js';

const FAILING_RULE_ID = '6f0a1c52-3d7e-4c1b-9a31-0b7d6f1e2a61';

/** A Zeek http record that raises one alert of its own (one affected host each). */
const webshell = (n: number) => ({ ts: 1_795_338_000 + n, uid: `Cexp${n}`, 'id.orig_h': '198.51.100.7', 'id.orig_p': 40000 + (n % 20000), 'id.resp_h': `10.9.${Math.floor(n / 250)}.${n % 250}`, 'id.resp_p': 80, method: 'PUT', uri: `/u/${n}.php`, host: 'web' });

interface Item { id: string; seq: number; type: string; data: Record<string, unknown>; actor?: { id: string } }

/** A webhook receiver that checks every signature as docs/export.md tells receivers to. */
async function webhookReceiver(secret: string, answer: (req: IncomingMessage) => { status: number; headers?: Record<string, string>; delayMs?: number } = () => ({ status: 200 })) {
  const received: Item[] = [];
  const badSignatures: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const header = String(req.headers['vigil-signature'] ?? '');
      const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
      const expected = m ? createHmac('sha256', secret).update(`${m[1]}.`).update(body).digest() : undefined;
      if (!m || !expected || !timingSafeEqual(expected, Buffer.from(m[2]!, 'hex')) || Math.abs(Date.now() / 1000 - Number(m[1])) > 300) {
        badSignatures.push(header);
        res.writeHead(401).end();
        return;
      }
      const a = answer(req);
      setTimeout(() => {
        if (a.status === 200) received.push(...(JSON.parse(body.toString('utf8')) as { items: Item[] }).items);
        res.writeHead(a.status, a.headers).end();
      }, a.delayMs ?? 0);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, received, badSignatures, close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }) };
}

function secretFile(dir: string, name: string, content: string): string {
  const folder = join(dir, 'export-secrets');
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const path = join(folder, name);
  writeFileSync(path, content, { mode: 0o600 });
  return path;
}

async function until<T>(check: () => Promise<T | undefined> | T | undefined, what: string, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** An instance with the webshell rule and tokens, from a config with `extra`. */
async function instance(extra: Record<string, unknown>) {
  const dir = tempDir();
  const config = writeTestConfig(dir.path, extra);
  const token = (role: string) => (JSON.parse(runCli(['api-token-generate', role, role, '--config', config]).stdout) as { token: string }).token;
  const tokens = { ingestor: token('ingestor'), admin: token('admin'), rule_admin: token('rule_admin') };
  const serve = await startServe(config, dir.path);
  const res = await fetch(`${serve.url}/api/v1/rules`, { method: 'POST', headers: { authorization: `Bearer ${tokens.rule_admin}`, 'content-type': 'application/yaml' }, body: WEBSHELL_RULE });
  assert.equal(res.status, 201, await res.text());
  return { dir, config, tokens, serve };
}

async function ingestWebshells(serve: ServeProcess, token: string, from: number, count: number): Promise<void> {
  const res = await fetch(`${serve.url}/api/v1/ingest/network-monitor?logType=http`, {
    method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(Array.from({ length: count }, (_, i) => webshell(from + i))),
  });
  assert.equal(res.status, 202, await res.text());
}

async function exportsStatus(serve: ServeProcess, admin: string) {
  const res = await fetch(`${serve.url}/api/v1/exports`, { headers: { authorization: `Bearer ${admin}` } });
  assert.equal(res.status, 200);
  return await res.json() as { enabled: boolean; destinations: Array<{ name: string; cursor: number; head: number; lagRecords: number; state: string; lastError?: { message: string }; lastSuccessAt?: string }> };
}

async function stop(serve: ServeProcess): Promise<void> {
  serve.proc.kill('SIGTERM');
  await serve.exited;
}

/** The TCP sockets a process holds, from /proc: local and remote ends and state. */
function tcpSocketsOf(pid: number): Array<{ local: string; remote: string; state: string }> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch { /* closed meanwhile */ }
  }
  const out: Array<{ local: string; remote: string; state: string }> = [];
  for (const table of ['tcp', 'tcp6', 'udp', 'udp6']) {
    for (const line of readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length > 9 && inodes.has(f[9]!)) out.push({ local: `${table}:${f[1]}`, remote: f[2]!, state: f[3]! });
    }
  }
  return out;
}

describe('export (vigil serve end to end)', () => {
  it('with no export configured, opens no outbound connection under ingest', async () => {
    const { serve, tokens } = await instance({});
    try {
      assert.match(serve.output(), /export: no destinations configured; nothing leaves this machine/);
      for (let b = 0; b < 5; b++) await ingestWebshells(serve, tokens.ingestor, b * 50, 50);
      const port = Number(new URL(serve.url).port).toString(16).toUpperCase().padStart(4, '0');
      const sockets = tcpSocketsOf(serve.proc.pid!);
      assert.ok(sockets.some((s) => s.state === '0A' && s.local.endsWith(`:${port}`)), 'its own listener is there');
      // Every socket is the listener or a connection accepted on it: none was opened outward.
      const foreign = sockets.filter((s) => !s.local.endsWith(`:${port}`));
      assert.deepEqual(foreign, []);
      const status = await exportsStatus(serve, tokens.admin);
      assert.deepEqual(status, { enabled: false, destinations: [] });
    } finally {
      await stop(serve);
    }
  });

  it('delivers every alert at least once and in order to a signed webhook across a kill -9', async () => {
    const secret = 'whsec-0123456789abcdef-export-test';
    let slow = true;
    const hook = await webhookReceiver(secret, () => ({ status: 200, delayMs: slow ? 40 : 0 }));
    const dir = tempDir();
    const destinations = [{ name: 'tickets', kind: 'webhook', url: hook.url, secretFile: secretFile(dir.path, 'hook.secret', `${secret}\n`), carries: ['alerts'], batchSize: 5 }];
    const { serve, tokens, config, dir: home } = await instance({ export: { destinations } });
    let current = serve;
    try {
      assert.match(current.output(), /export enabled/);
      for (let b = 0; b < 6; b++) await ingestWebshells(current, tokens.ingestor, b * 40, 40);
      await until(() => hook.received.length > 20 || undefined, 'deliveries to begin');
      assert.ok(hook.received.length < 250, 'the kill lands mid-delivery');
      current.proc.kill('SIGKILL');
      await current.exited;
      slow = false;
      current = await startServe(config, home.path);
      await ingestWebshells(current, tokens.ingestor, 1000, 10);
      const status = await until(async () => {
        const s = await exportsStatus(current, tokens.admin);
        return s.destinations[0]!.lagRecords === 0 ? s : undefined;
      }, 'the destination to catch up');
      assert.equal(status.destinations[0]!.state, 'delivering');
      assert.deepEqual(hook.badSignatures, []);
      // Every alert the instance raised arrived; first arrivals are in log order.
      const listed = await (await fetch(`${current.url}/api/v1/alerts?limit=1000`, { headers: { authorization: `Bearer ${tokens.admin}` } })).json() as { alerts: Array<{ id: string; ruleId: string }> };
      const raised = listed.alerts.filter((a) => a.ruleId === '11111111-2222-4333-8444-555555555555').map((a) => a.id);
      assert.equal(raised.length, 250);
      const firstArrival: Item[] = [];
      const seen = new Set<string>();
      for (const item of hook.received) if (!seen.has(item.id)) { seen.add(item.id); firstArrival.push(item); }
      const arrived = firstArrival.filter((i) => i.type === 'alert.raised').map((i) => i.data.alertId as string);
      assert.deepEqual([...arrived].sort(), [...raised].sort());
      assert.equal(new Set(arrived).size, arrived.length);
      assert.deepEqual(firstArrival.map((i) => i.seq), [...firstArrival.map((i) => i.seq)].sort((a, b) => a - b));
    } finally {
      await stop(current);
      await hook.close();
    }
  });

  it('rides out a receiver answering 503 with Retry-After, reports lag and the error, raises the failing alert, then delivers everything', async () => {
    const secret = 'whsec-another-secret-0123456789';
    let down = true;
    const hook = await webhookReceiver(secret, () => (down ? { status: 503, headers: { 'retry-after': '1' } } : { status: 200 }));
    const dir = tempDir();
    const destinations = [{ name: 'siem', kind: 'webhook', url: hook.url, secretFile: secretFile(dir.path, 'siem.secret', secret), carries: ['alerts', 'events'], failingAfterSeconds: 1 }];
    const { serve, tokens } = await instance({ export: { destinations } });
    try {
      await ingestWebshells(serve, tokens.ingestor, 0, 30);
      const behind = await until(async () => {
        const s = (await exportsStatus(serve, tokens.admin)).destinations[0]!;
        return s.state === 'failing' && s.lastError ? s : undefined;
      }, 'the destination to be marked failing');
      assert.ok(behind.lagRecords > 0);
      assert.match(behind.lastError!.message, /HTTP 503/);
      const alerts = await until(async () => {
        const res = await fetch(`${serve.url}/api/v1/alerts?rule=${FAILING_RULE_ID}`, { headers: { authorization: `Bearer ${tokens.admin}` } });
        const body = await res.json() as { alerts: Array<{ title: string; ruleId: string }> };
        return body.alerts.length > 0 ? body.alerts : undefined;
      }, 'the failing alert');
      assert.equal(alerts[0]!.title, 'Vigil export destination failing');
      down = false;
      await until(async () => (await exportsStatus(serve, tokens.admin)).destinations[0]!.lagRecords === 0 || undefined, 'catching up');
      const ids = new Set(hook.received.filter((i) => i.type === 'event').map((i) => i.data.id as string));
      assert.equal([...ids].filter((id) => id.length > 0).length >= 30, true, `${ids.size} events delivered`);
      assert.ok(hook.received.some((i) => i.type === 'alert.raised' && i.data.ruleId === FAILING_RULE_ID), 'the failing alert itself is exported once the destination recovers');
      assert.ok(!JSON.stringify(hook.received).includes('rawReference'), 'no rawReference without includeRaw');
      // The same state in /metrics and on the console's overview (admin).
      const metrics = await (await fetch(`${serve.url}/metrics`, { headers: { authorization: `Bearer ${tokens.admin}` } })).text();
      assert.match(metrics, /^vigil_export_lag_records\{destination="siem"\} 0$/m);
      assert.match(metrics, /^vigil_export_failing\{destination="siem"\} 0$/m);
      const overview = await (await fetch(`${serve.url}/`, { headers: { authorization: `Bearer ${tokens.admin}` } })).text();
      assert.match(overview, /<h2>Export<\/h2>/);
      assert.match(overview, /siem/);
    } finally {
      await stop(serve);
      await hook.close();
    }
  });

  it('sends OTLP/HTTP JSON logs and RFC 5424 octet-counted syslog', async () => {
    const otlpBodies: Array<{ resourceLogs: Array<{ scopeLogs: Array<{ logRecords: Array<{ body: { stringValue: string }; attributes: Array<{ key: string }>; severityNumber: number }> }> }> }> = [];
    const otlp = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        assert.equal(req.headers['content-type'], 'application/json');
        assert.equal(req.headers['authorization'], 'Bearer otlp-token');
        otlpBodies.push(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((r) => otlp.listen(0, '127.0.0.1', () => r()));
    let syslogText = '';
    const syslog = createTcpServer((s) => s.on('data', (c: Buffer) => { syslogText += c.toString('utf8'); }));
    await new Promise<void>((r) => syslog.listen(0, '127.0.0.1', () => r()));
    // A second Vigil receives through its own OTLP endpoint: a branch office exporting to headquarters.
    const hq = await instance({});
    const hqToken = (role: string) => (JSON.parse(runCli(['api-token-generate', `hq-${role}`, role, '--config', hq.config]).stdout) as { token: string }).token;
    const [hqIngestor, hqViewer] = [hqToken('ingestor'), hqToken('viewer')];
    const dir = tempDir();
    const destinations = [
      { name: 'headquarters', kind: 'otlp', url: `${hq.serve.url}/api/v1/otlp/v1/logs`, headersFile: secretFile(dir.path, 'hq.headers.json', JSON.stringify({ Authorization: `Bearer ${hqIngestor}` })), carries: ['alerts'] },
      { name: 'collector', kind: 'otlp', url: `http://127.0.0.1:${(otlp.address() as AddressInfo).port}/v1/logs`, headersFile: secretFile(dir.path, 'otlp.headers.json', JSON.stringify({ Authorization: 'Bearer otlp-token' })), carries: ['alerts'] },
      { name: 'syslog', kind: 'syslog', host: '127.0.0.1', port: (syslog.address() as AddressInfo).port, transport: 'tcp', carries: ['alerts'] },
    ];
    const { serve, tokens } = await instance({ export: { destinations } });
    try {
      await ingestWebshells(serve, tokens.ingestor, 0, 3);
      await until(async () => (await exportsStatus(serve, tokens.admin)).destinations.every((d) => d.lagRecords === 0) || undefined, 'both destinations to catch up');
      const records = otlpBodies.flatMap((b) => b.resourceLogs.flatMap((r) => r.scopeLogs.flatMap((s) => s.logRecords)));
      assert.equal(records.length, 3);
      assert.ok(records.every((r) => r.severityNumber === 17 && r.attributes.some((a) => a.key === 'vigil.item.id')));
      assert.equal((JSON.parse(records[0]!.body.stringValue) as { title: string }).title, 'Webshell upload');
      // Octet-counted frames: "<length> <RFC 5424 message>", one per alert.
      const frames: string[] = [];
      let rest = Buffer.from(syslogText, 'utf8');
      while (rest.length > 0) {
        const space = rest.indexOf(0x20);
        const len = Number(rest.subarray(0, space).toString());
        frames.push(rest.subarray(space + 1, space + 1 + len).toString('utf8'));
        rest = rest.subarray(space + 1 + len);
      }
      assert.equal(frames.length, 3);
      for (const f of frames) assert.match(f, /^<107>1 \d{4}-\d\d-\d\dT[^ ]+ \S+ vigil - alert\.raised \[vigil@32473 id="[^"]+" seq="\d+" origin="vigil\.log\/[0-9a-f]+"\] \uFEFF\{/);
      // The body is the item as docs/export.md describes it: the same id, seq and time as the header.
      for (const f of frames) {
        const [, at, id, seq] = /^\S+ (\S+) .*? id="([^"]+)" seq="(\d+)"/.exec(f)!;
        const item = JSON.parse(f.slice(f.indexOf('\uFEFF') + 1)) as Record<string, unknown>;
        assert.deepEqual(Object.keys(item), ['id', 'seq', 'type', 'at', ...('actor' in item ? ['actor'] : []), 'data']);
        assert.deepEqual([item.id, item.seq, item.type, item.at], [id, Number(seq), 'alert.raised', at]);
      }
      // Headquarters stored the three alerts as OpenTelemetry log events, item ids and all.
      const events = await (await fetch(`${hq.serve.url}/api/v1/events?adapter=opentelemetry-log&limit=100`, { headers: { authorization: `Bearer ${hqViewer}` } })).json() as { events: Array<{ attributes: Record<string, unknown> }> };
      const received = JSON.stringify(events.events);
      assert.equal(events.events.length, 3, received.slice(0, 500));
      assert.match(received, /Webshell upload/);
      assert.match(received, /vigil\.log\/[0-9a-f]+\/\d+\/0/);
    } finally {
      await stop(hq.serve);
      await stop(serve);
      otlp.close();
      syslog.close();
    }
  });

  it('refuses to start with a secret file others can read, naming it', async () => {
    const dir = tempDir();
    const path = secretFile(dir.path, 'open.secret', 'whsec-0123456789abcdef');
    writeFileSync(path, 'whsec-0123456789abcdef', { mode: 0o644 });
    const { chmodSync } = await import('node:fs');
    chmodSync(path, 0o644);
    const config = writeTestConfig(dir.path, { export: { destinations: [{ name: 'x', kind: 'webhook', url: 'https://tickets.example/hook', secretFile: path, carries: ['alerts'] }] } });
    const r = runCli(['serve', '--config', config], { cwd: dir.path });
    assert.notEqual(r.status, 0);
    assert.match(r.stderr + r.stdout, /export destination x secretFile: .*open\.secret is readable or writable by group or others/);
  });
});
