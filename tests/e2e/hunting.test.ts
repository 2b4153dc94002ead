import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { apiToken, startServe, writeTestConfig } from '../helpers/cli.js';
import { CLI } from '../helpers/cli.js';
import { fixturePath } from '../helpers/paths.js';
import { tempDir } from '../helpers/temp.js';

type Answer = { id: string; output: string; events?: Array<Record<string, any>>; columns?: string[]; rows?: unknown[][]; complete: boolean; scanned: number; nextCursor: string | null };

const HOUR = 3_600_000;

/**
 * Issue 61 on a real `vigil serve`: journal logons (the sshd "Accepted publickey" entry of the journal fixture, on
 * several hosts), Zeek dns records (the first record of the WRCCDC dns fixture, with other queries) and RFC 5424 sudo
 * lines (the fixture's two refusals, for several users) ingested through the raw routes; the three example
 * hunts answer exactly what the test put in; the CLI answers the same and writes a proof `vigil log verify-inclusion`
 * accepts offline; and a scan past `limits.searchEvents` answers `complete: false` while ingest goes on answering 202.
 */
describe('hunting on vigil serve', () => {
  it('answers the three example hunts exactly, proves what it cited, and stops at its bound while ingest goes on', { timeout: 180_000 }, async () => {
    const dir = tempDir('vigil-hunt-');
    const config = writeTestConfig(dir.path, { limits: { searchEvents: 1000 }, log: { checkpointEverySeconds: 1 } });
    const ingestor = apiToken(config, 'hunt-ingest', 'ingestor');
    const analyst = apiToken(config, 'hunt-analyst', 'analyst');
    const serve = await startServe(config, dir.path);
    const post = async (path: string, body: string, token = ingestor, type = 'application/json') => {
      const res = await fetch(`${serve.url}${path}`, { method: 'POST', body, headers: { authorization: `Bearer ${token}`, 'content-type': type } });
      return { status: res.status, body: await res.json() as any };
    };
    const search = async (query: string, range: { since: string; until: string }, extra: Record<string, unknown> = {}) => {
      const r = await post('/api/v1/search', JSON.stringify({ query, ...range, ...extra }), analyst);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return r.body as Answer;
    };
    try {
      const now = Date.now();
      const week = { since: new Date(now - 7 * 24 * HOUR).toISOString(), until: new Date(now).toISOString() };
      // 1. Which hosts did alice log in to last week, how many times each.
      const journal = readFileSync(fixturePath('linux-journal', 'constructed-security-events.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, string>);
      const accepted = journal.find((e) => /^Accepted publickey for alice/.test(e.MESSAGE!))!;
      const logons: Array<[string, string, number]> = [['web-1', 'alice', 3], ['web-2', 'alice', 1], ['db-1', 'alice', 2], ['web-1', 'bob', 4]];
      const entries: Record<string, string>[] = [];
      let n = 0;
      for (const [host, user, times] of logons)
        for (let i = 0; i < times; i++) {
          const at = (now - (n + 1) * 6 * HOUR) * 1000;
          entries.push({ ...accepted, _HOSTNAME: host, MESSAGE: accepted.MESSAGE!.replace('for alice', `for ${user}`), __CURSOR: `${accepted.__CURSOR};hunt=${n}`, __REALTIME_TIMESTAMP: String(at), _SOURCE_REALTIME_TIMESTAMP: String(at) });
          n++;
        }
      // One logon of alice's from before the week: outside the range.
      const old = (now - 9 * 24 * HOUR) * 1000;
      entries.push({ ...accepted, _HOSTNAME: 'web-9', __CURSOR: `${accepted.__CURSOR};hunt=old`, __REALTIME_TIMESTAMP: String(old), _SOURCE_REALTIME_TIMESTAMP: String(old) });
      assert.equal((await post('/api/v1/ingest/linux-journal', JSON.stringify(entries))).status, 202);

      // 2. Every DNS query for *.example.ru.
      const dns = JSON.parse(readFileSync(fixturePath('network-monitor', 'wrccdc-json-streaming', 'dns.jsonl'), 'utf8').split('\n')[0]!) as Record<string, unknown>;
      const queries = ['mail.example.ru', 'ise.wrccdc.org', 'a.b.example.ru', 'example.ru.evil.test', 'www.example.org', 'cdn.EXAMPLE.RU'];
      const zeek = queries.map((query, i) => ({ ...dns, uid: `Chunt${i}`, query, ts: new Date(now - (i + 1) * HOUR).toISOString() }));
      assert.equal((await post('/api/v1/ingest/network-monitor?logType=dns', JSON.stringify(zeek))).status, 202);

      // 3. Failed sudo by user over time.
      const lines = readFileSync(fixturePath('syslog-rfc5424', 'constructed-linux-valid.log'), 'utf8').split('\n');
      const refused = lines.find((l) => /mallory : 3 incorrect password attempts/.test(l))!;
      const hourStart = Math.floor(now / HOUR) * HOUR;
      const sudo: Array<[string, number]> = [['mallory', hourStart - 3 * HOUR + 60_000], ['mallory', hourStart - 3 * HOUR + 120_000], ['eve', hourStart - 3 * HOUR + 180_000], ['mallory', hourStart - HOUR + 60_000]];
      const syslog = sudo.map(([user, at]) => refused.replace(/^(<\d+>1 )\S+/, `$1${new Date(at).toISOString()}`).replace('mallory :', `${user} :`)).join('\n');
      // One sudo that succeeded (alice's line of the fixture, moved into the range): not a failure.
      const allowed = lines.find((l) => /alice : TTY=pts\/0/.test(l))!.replace(/^(<\d+>1 )\S+/, `$1${new Date(hourStart - 2 * HOUR).toISOString()}`);
      assert.equal((await post('/api/v1/ingest/syslog-rfc5424', `${syslog}\n${allowed}\n`, ingestor, 'text/plain')).status, 202);

      const hosts = await search('class:authentication and outcome:success and actor.user:alice | stats count() by actor.host', week);
      assert.deepEqual(hosts.columns, ['actor.host', 'count']);
      assert.deepEqual(hosts.rows, [['web-1', 3], ['db-1', 2], ['web-2', 1]]);
      assert.equal(hosts.complete, true);

      const ru = await search('class:dns_query and attributes.query:*.example.ru', week);
      assert.deepEqual(ru.events!.map((e) => e.attributes.query).sort(), ['a.b.example.ru', 'cdn.EXAMPLE.RU', 'mail.example.ru']);

      const sudoChart = await search('class:privilege_escalation and outcome:failure | timechart span=1h count() by actor.user', { since: new Date(hourStart - 4 * HOUR).toISOString(), until: new Date(hourStart).toISOString() });
      const hourAt = (h: number) => new Date(hourStart - h * HOUR).toISOString();
      assert.deepEqual(sudoChart.rows!.filter((r) => r.at(-1) !== 0), [[hourAt(3), 'mallory', 2], [hourAt(3), 'eve', 1], [hourAt(1), 'mallory', 1]]);

      // The CLI: the same hunt, and the proof of the DNS hunt checked offline.
      const cli = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { env: { ...process.env, VIGIL_TOKEN: analyst }, encoding: 'utf8' });
      const fromCli = cli(['search', 'class:dns_query and attributes.query:*.example.ru', '--since', '7d', '--url', serve.url, '--json']);
      assert.equal(fromCli.status, 0, fromCli.stderr);
      assert.equal((JSON.parse(fromCli.stdout) as Answer).events!.length, 3);
      let proofDir = '';
      for (let i = 0; ; i++) {
        proofDir = mkdtempSync(join(dir.path, 'proof-'));
        const written = cli(['search', '--proof', ru.id, '--out', proofDir, '--url', serve.url]);
        // Until the first checkpoint is signed (every second here), there is nothing to prove against.
        const noneYet = written.status === 1 && /no signed checkpoint yet/.test(written.stderr);
        assert.ok(written.status === 0 || noneYet, written.stderr);
        if (!noneYet && (JSON.parse(written.stdout) as { pending: number[] }).pending.length === 0) break;
        assert.ok(i < 50, 'no checkpoint came to cover the cited records');
        await new Promise((r) => setTimeout(r, 300));
      }
      const key = cli(['log', 'public-key', '--config', config]).stdout.trim();
      const records = readdirSync(proofDir).filter((f) => f.endsWith('.record'));
      assert.ok(records.length >= 1);
      for (const f of records) {
        const seq = f.replace('.record', '');
        const verified = cli(['log', 'verify-inclusion', join(proofDir, f), join(proofDir, 'checkpoint.txt'), '--key', key, '--proof', join(proofDir, `${seq}.proof.json`)]);
        assert.equal(verified.status, 0, verified.stdout + verified.stderr);
      }

      // Past its bound: 6,000 more events, a full scan stops at 1,000 events, and ingest answers 202 meanwhile.
      const many = Array.from({ length: 6000 }, (_, i) => ({ ...dns, uid: `Cmany${i}`, query: `h${i}.example.com`, ts: new Date(now - 2 * HOUR + i).toISOString() }));
      for (let i = 0; i < many.length; i += 2000)
        assert.equal((await post('/api/v1/ingest/network-monitor?logType=dns', JSON.stringify(many.slice(i, i + 2000)))).status, 202);
      const [bounded, ...ingests] = await Promise.all([
        search('* | stats count() by class', week),
        ...Array.from({ length: 5 }, (_, i) => post('/api/v1/ingest/network-monitor?logType=dns', JSON.stringify([{ ...dns, uid: `Cduring${i}`, query: `during${i}.example.com`, ts: new Date(now).toISOString() }]))),
      ]);
      assert.equal(bounded.complete, false);
      assert.equal(bounded.scanned, 1000);
      assert.deepEqual(ingests.map((r) => (r as { status: number }).status), [202, 202, 202, 202, 202]);
    } finally {
      serve.proc.kill('SIGTERM');
      await serve.exited;
      dir.cleanup();
    }
  });
});
