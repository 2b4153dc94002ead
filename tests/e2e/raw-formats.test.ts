import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { apiToken, runCli, startServe, writeTestConfig, type ServeProcess } from '../helpers/cli.js';
import { fixturePath } from '../helpers/paths.js';
import { tempDir } from '../helpers/temp.js';

const LOGGER = '/usr/bin/logger';

interface StoredEvent {
  id: string;
  time: string;
  source: { adapter: string; instance: string };
  attributes: Record<string, unknown>;
}
interface Answer {
  accepted: Array<{ id: string }>;
  duplicates: number;
  refused: Array<{ index: number; line?: number; issues: string[] }>;
}


/**
 * What util-linux `logger --rfc5424` emits, appended to `file`: `--no-act --stderr` writes the
 * message it would send (UDP to a port nobody listens on, so nothing is sent) to stderr.
 */
function loggerToFile(file: string, args: string[]): void {
  const r = spawnSync(LOGGER, ['--no-act', '--stderr', '--rfc5424', '--udp', '-n', '127.0.0.1', '-P', '9', ...args], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.status, 0, r.stderr);
  appendFileSync(file, r.stderr);
}

/** The bytes `logger --tcp --octet-count` sends, captured by a local TCP server, one connection per message. */
async function octetCountedFromLogger(messages: string[][]): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const server = createServer((s) => s.on('data', (d: Buffer) => chunks.push(d)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  try {
    for (const args of messages) {
      execFileSync(LOGGER, ['--tcp', '--octet-count', '--rfc5424', '-n', '127.0.0.1', '-P', String(port), ...args], { stdio: 'ignore', timeout: 30_000 });
      // logger has exited, so its bytes are on the loopback; wait until the server has read them.
      const before = Buffer.concat(chunks).length;
      for (let i = 0; i < 300 && Buffer.concat(chunks).length === before; i++) await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
  return Buffer.concat(chunks);
}

describe('raw formats as shippers send them, to a real vigil serve', () => {
  const dir = tempDir();
  let serve: ServeProcess;
  let ingestor: string;
  let viewer: string;

  before(async () => {
    const config = writeTestConfig(dir.path);
    ingestor = apiToken(config, 'shipper', 'ingestor');
    viewer = apiToken(config, 'reader', 'viewer');
    serve = await startServe(config, dir.path);
  });
  after(async () => {
    serve.proc.kill('SIGTERM');
    await serve.exited;
    dir.cleanup();
  });

  const post = (path: string, body: string | Buffer, type: string) =>
    fetch(`${serve.url}/api/v1/ingest/${path}`, { method: 'POST', headers: { authorization: `Bearer ${ingestor}`, 'content-type': type }, body });
  const stored = async (adapter: string): Promise<StoredEvent[]> => {
    const res = await fetch(`${serve.url}/api/v1/events?adapter=${adapter}&limit=1000`, { headers: { authorization: `Bearer ${viewer}` } });
    assert.equal(res.status, 200);
    return (await res.json() as { events: StoredEvent[] }).events;
  };

  it('stores a file of logger --rfc5424 output sent as text/plain, one event per line, as the wrapped records would be', async () => {
    const file = join(dir.path, 'logger.log');
    writeFileSync(file, '');
    loggerToFile(file, ['-t', 'rawapp', '-p', 'auth.warning', '--msgid', 'LOGIN', 'raw text line one']);
    loggerToFile(file, ['-t', 'rawapp', '-p', 'daemon.info', '--sd-id', 'origin@32473', '--sd-param', 'software="vigil-test"', 'raw text line two']);
    loggerToFile(file, ['-t', 'otherapp', 'raw text line three']);
    const text = readFileSync(file, 'utf8');
    const lines = text.split('\n').filter((l) => l !== '');
    assert.equal(lines.length, 3, text);
    assert.ok(lines.every((l) => /^<\d+>1 \d{4}-/.test(l)), text);

    const res = await post('syslog-rfc5424', readFileSync(file), 'text/plain; charset=utf-8');
    assert.equal(res.status, 202, await res.clone().text());
    const answer = await res.json() as Answer;
    assert.equal(answer.accepted.length, 3);
    assert.deepEqual(answer.refused, []);

    const events = (await stored('syslog-rfc5424')).filter((e) => String(e.attributes['MSG']).startsWith('raw text line'));
    assert.deepEqual(events.map((e) => e.attributes['MSG']).sort(), ['raw text line one', 'raw text line three', 'raw text line two']);
    const two = events.find((e) => e.attributes['MSG'] === 'raw text line two')!;
    assert.equal(two.attributes['APP-NAME'], 'rawapp');
    assert.deepEqual((two.attributes['STRUCTURED-DATA'] as Record<string, unknown>)['origin@32473'], { software: 'vigil-test' });
    assert.equal(events.find((e) => e.attributes['MSG'] === 'raw text line one')!.attributes['MSGID'], 'LOGIN');

    // The same lines wrapped as {message} records are the same raw records: nothing new is stored.
    const wrapped = await post('syslog-rfc5424', JSON.stringify(lines.map((message) => ({ message }))), 'application/json');
    assert.equal(wrapped.status, 202);
    const again = await wrapped.json() as Answer;
    assert.deepEqual(again.accepted.map((e) => e.id), answer.accepted.map((e) => e.id));
    assert.equal(again.duplicates, 3);
  });

  it('stores octet-counted frames as logger --octet-count sends them over TCP', async () => {
    const bytes = await octetCountedFromLogger([
      ['-t', 'framedapp', 'framed message one'],
      ['-t', 'framedapp', 'framed message\nwith a newline inside'],
    ]);
    assert.match(bytes.toString('utf8'), /^\d+ <\d+>1 /);
    const res = await post('syslog-rfc5424', bytes, 'text/plain');
    assert.equal(res.status, 202, await res.clone().text());
    const answer = await res.json() as Answer;
    assert.equal(answer.accepted.length, 2);
    assert.deepEqual(answer.refused, []);
    const msgs = (await stored('syslog-rfc5424')).map((e) => e.attributes['MSG']);
    assert.ok(msgs.includes('framed message one'), JSON.stringify(msgs));
    assert.ok(msgs.includes('framed message\nwith a newline inside'), JSON.stringify(msgs));
  });

  it('accepts a journal batch with one line without a timestamp and lists that line as refused', async () => {
    const journal = readFileSync(fixturePath('linux-journal', 'constructed-security-events.jsonl'), 'utf8').split('\n').filter((l) => l !== '').slice(0, 6)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const bad = { ...journal[3]! };
    delete bad['__REALTIME_TIMESTAMP'];
    delete bad['_SOURCE_REALTIME_TIMESTAMP'];
    const records = [...journal.slice(0, 3), bad, ...journal.slice(3 + 1)];
    const body = records.map((r) => JSON.stringify(r)).join('\n') + '\n';
    const before = new Set((await stored('linux-journal')).map((e) => e.id));

    const atomic = await post('linux-journal?atomic=true', body, 'application/x-ndjson');
    assert.equal(atomic.status, 400);
    assert.deepEqual((await atomic.json() as { issues: string[] }).issues.map((i) => i.slice(0, 12)), ['records[3]: ']);
    assert.equal((await stored('linux-journal')).length, before.size, 'atomic=true stores nothing');

    const res = await post('linux-journal', body, 'application/x-ndjson');
    assert.equal(res.status, 202, await res.clone().text());
    const answer = await res.json() as Answer;
    assert.equal(answer.refused.length, 1);
    assert.equal(answer.refused[0]!.index, 3);
    assert.equal(answer.refused[0]!.line, 4);
    assert.match(answer.refused[0]!.issues[0]!, /__REALTIME_TIMESTAMP/);
    const now = await stored('linux-journal');
    const added = now.filter((e) => !before.has(e.id));
    assert.equal(added.length, answer.accepted.length);
    assert.equal(added.length, records.length - 1);
    assert.deepEqual(new Set(added.map((e) => e.id)), new Set(answer.accepted.map((e) => e.id)));
  });

  it('takes Tailscale API responses as the API returns them, as the same records wrapped in [ ] would be', async () => {
    for (const [logType, file] of [['network', 'network-flow-api-response-constructed.json'], ['configuration', 'audit-api-response-constructed.json']] as const) {
      const text = readFileSync(fixturePath('mesh-vpn-logs', file), 'utf8');
      const res = await post(`mesh-vpn-logs?logType=${logType}&meshnet=example.ts.net`, text, 'application/json');
      assert.equal(res.status, 202, `${file}: ${await res.clone().text()}`);
      const answer = await res.json() as Answer;
      assert.ok(answer.accepted.length >= (JSON.parse(text) as { logs: unknown[] }).logs.length, file);
      assert.deepEqual(answer.refused, []);
      const wrapped = await post(`mesh-vpn-logs?logType=${logType}&meshnet=example.ts.net`, `[${text}]`, 'application/json');
      assert.equal(wrapped.status, 202);
      const again = await wrapped.json() as Answer;
      assert.deepEqual(again.accepted.map((e) => e.id), answer.accepted.map((e) => e.id));
      assert.equal(again.duplicates, answer.accepted.length);
    }
  });
});
