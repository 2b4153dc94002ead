import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openStoreSnapshot } from '../../src/log/store-snapshot.js';
import { AUDITORS_DIR } from '../../src/log/auditor-marks.js';
import { CLI, apiToken, runCli, startServe, writeTestConfig, type ServeProcess } from '../helpers/cli.js';
import { WEBSHELL_RULE, WEBSHELL_RULE_ID } from '../helpers/event-fixtures.js';
import { makeEvent } from '../helpers/instance.js';
import { tempDir } from '../helpers/temp.js';

/** A second rule: a DELETE on a web server. */
const DELETE_RULE_ID = '22222222-3333-4444-8555-666666666666';
const DELETE_RULE = `title: Delete on a web server
id: ${DELETE_RULE_ID}
status: test
logsource: {product: zeek, service: http}
detection:
  sel:
    method: DELETE
  condition: sel
level: medium
`;

/** A Zeek http record from 198.51.100.7 to `host`. */
const zeekHttp = (host: string, method: string, uri: string, sec: number) => ({
  ts: 1_795_338_000 + sec,
  uid: `C${host}${sec}`,
  'id.orig_h': '198.51.100.7',
  'id.orig_p': 40000 + sec,
  'id.resp_h': host,
  'id.resp_p': 80,
  method,
  uri,
  host: 'web',
});

/** `vigil ...args` run without blocking this process (the ingest loop goes on meanwhile). */
function runCliAsync(args: string[], cwd: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout: Buffer.concat(out).toString('utf8'), stderr }));
  });
}

/**
 * A steady ingest: two clients POSTing batches of 20 events, one after the other, until `stop()`
 * (or 3,000 requests, or 3 minutes); resolves with every answer's status.
 */
function steadyIngest(url: string, token: string): { stop: () => Promise<number[]>; answered: () => number } {
  const statuses: number[] = [];
  let stopped = false;
  const deadline = Date.now() + 180_000;
  const client = async (c: number) => {
    for (let b = 0; !stopped && statuses.length < 3000 && Date.now() < deadline; b++) {
      const events = Array.from({ length: 20 }, (_, i) => makeEvent({ id: `load-${c}-${b}-${i}` }));
      try {
        const res = await fetch(`${url}/api/v1/events`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(events),
        });
        await res.text();
        statuses.push(res.status);
      } catch {
        statuses.push(0); // no answer at all
        return;
      }
    }
  };
  const running = Promise.all([client(0), client(1)]);
  return {
    answered: () => statuses.length,
    stop: async () => {
      stopped = true;
      await running;
      return statuses;
    },
  };
}

const jsonFile = <T>(path: string): T => JSON.parse(readFileSync(path, 'utf8')) as T;

describe('auditing a serving instance', () => {
  it('log verify, log export --raw and replay --until --out run beside vigil serve under steady ingest, which keeps answering 202', async () => {
    const dir = tempDir();
    const config = writeTestConfig(dir.path, { log: { checkpointEverySeconds: 1 } });
    const tokens = {
      ingestor: apiToken(config, 'loader', 'ingestor'),
      ruleAdmin: apiToken(config, 'rules', 'rule_admin'),
      admin: apiToken(config, 'operator', 'admin'),
    };
    let serve: ServeProcess | undefined;
    let load: ReturnType<typeof steadyIngest> | undefined;
    try {
      serve = await startServe(config, dir.path);
      const url = serve.url;
      const call = async (path: string, token: string, init: RequestInit = {}) => {
        const res = await fetch(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, ...init.headers } });
        return { status: res.status, body: (await res.json()) as Record<string, unknown> };
      };
      for (const rule of [WEBSHELL_RULE, DELETE_RULE]) {
        const r = await call('/api/v1/rules', tokens.ruleAdmin, { method: 'POST', body: rule, headers: { 'content-type': 'application/yaml' } });
        assert.equal(r.status, 201, JSON.stringify(r.body));
      }
      const zeek = async (record: Record<string, unknown>) => {
        const r = await call('/api/v1/ingest/network-monitor?logType=http', tokens.ingestor, { method: 'POST', body: JSON.stringify([record]), headers: { 'content-type': 'application/json' } });
        assert.equal(r.status, 202, JSON.stringify(r.body));
        return (r.body.alerts as Array<{ id: string; ruleId: string; raised: boolean }>).filter((a) => a.raised);
      };

      load = steadyIngest(url, tokens.ingestor);
      const before = await zeek(zeekHttp('10.0.0.8', 'PUT', '/shell.php', 10));
      assert.deepEqual(before.map((a) => a.ruleId), [WEBSHELL_RULE_ID]);

      // The head a live verify reads is the SEQ of the replay below: the webshell alert is in it.
      const answeredBefore = load.answered();
      const verified = await runCliAsync(['log', 'verify', '--config', config], dir.path);
      assert.equal(verified.status, 0, verified.stderr + verified.stdout);
      const verdict = JSON.parse(verified.stdout) as { ok: boolean; records: number; tree: { ok: boolean } };
      assert.equal(verdict.ok, true);
      assert.equal(verdict.tree.ok, true);
      const seq = verdict.records;

      const after = await zeek(zeekHttp('10.0.0.9', 'DELETE', '/index.html', 20));
      assert.deepEqual(after.map((a) => a.ruleId), [DELETE_RULE_ID]);
      // A checkpoint a second (log.checkpointEverySeconds): the first may be a moment away.
      let published = await call('/api/v1/log/checkpoint', tokens.admin);
      for (let i = 0; i < 50 && published.status === 404; i++) {
        await new Promise((r) => setTimeout(r, 200));
        published = await call('/api/v1/log/checkpoint', tokens.admin);
      }
      assert.equal(published.status, 200, JSON.stringify(published.body));
      const checkpoint = published.body as { checkpoint: string; tree_size: number };
      const key = runCli(['log', 'public-key', '--config', config]);
      assert.equal(key.status, 0, key.stderr);

      // All three at once, while the load goes on.
      const asOf = join(dir.path, 'as-of');
      const [exported, replayed, again] = await Promise.all([
        runCliAsync(['log', 'export', '--raw', '--config', config], dir.path),
        runCliAsync(['replay', '--until', String(seq), '--out', asOf, '--config', config], dir.path),
        runCliAsync(['log', 'verify', '--config', config], dir.path),
      ]);
      const duringAudits = load.answered() - answeredBefore;
      const statuses = await load.stop();
      assert.deepEqual([...new Set(statuses)], [202], 'every ingest request was acknowledged');
      assert.ok(duringAudits >= 10, `ingest went on while the audits ran (${duringAudits} requests answered)`);
      assert.equal(again.status, 0, again.stderr + again.stdout);
      assert.ok((JSON.parse(again.stdout) as { records: number }).records > seq);

      // The export: dense from record 1, and it verifies offline against a checkpoint the service signed.
      assert.equal(exported.status, 0, exported.stderr);
      const lines = exported.stdout.trimEnd().split('\n');
      assert.deepEqual(lines.map((l) => (JSON.parse(l) as { seq: number }).seq), lines.map((_, i) => i + 1));
      assert.ok(lines.length >= checkpoint.tree_size && lines.length > seq, `${lines.length} lines, checkpoint of ${checkpoint.tree_size}, SEQ ${seq}`);
      writeFileSync(join(dir.path, 'export.jsonl'), exported.stdout);
      writeFileSync(join(dir.path, 'cp.txt'), checkpoint.checkpoint);
      const offline = runCli(['log', 'verify', '--export', join(dir.path, 'export.jsonl'), '--checkpoint', join(dir.path, 'cp.txt'), '--key', key.stdout.trim()]);
      assert.equal(offline.status, 0, offline.stderr + offline.stdout);

      // The replay as of SEQ: the webshell alert and its server, not the DELETE raised after SEQ.
      assert.equal(replayed.status, 0, replayed.stderr);
      assert.equal(statSync(asOf).mode & 0o777, 0o700);
      assert.deepEqual(readdirSync(asOf).sort(), ['alerts.json', 'entities.json', 'incidents.json', 'relationships.json', 'summary.json']);
      const summary = jsonFile<{ until: number; records: number; alerts: number }>(join(asOf, 'summary.json'));
      assert.equal(summary.until, seq);
      assert.equal(summary.records, seq);
      const alertsAsOf = jsonFile<Array<{ id: string; ruleId: string }>>(join(asOf, 'alerts.json'));
      assert.deepEqual(alertsAsOf.map((a) => a.id), before.map((a) => a.id));
      const entitiesAsOf = jsonFile<Array<{ key: string }>>(join(asOf, 'entities.json')).map((e) => e.key);
      assert.ok(entitiesAsOf.some((k) => k.includes('10.0.0.8')), 'the webshell server is in the graph');
      assert.ok(!entitiesAsOf.some((k) => k.includes('10.0.0.9')), 'the server of the later DELETE is not');
      assert.ok(jsonFile<unknown[]>(join(asOf, 'relationships.json')).length > 0);
      assert.match(readFileSync(join(asOf, 'alerts.json'), 'utf8'), /^\[\n {2}\{\n/, 'pretty-printed for a person');

      // As of the head, the replay's alerts and incidents are the live service's.
      const atHead = join(dir.path, 'at-head');
      const whole = await runCliAsync(['replay', '--out', atHead, '--config', config], dir.path);
      assert.equal(whole.status, 0, whole.stderr);
      const liveAlerts = (await call('/api/v1/alerts?limit=1000', tokens.admin)).body.alerts as Array<{ id: string }>;
      const liveIncidents = (await fetch(`${url}/api/v1/incidents`, { headers: { authorization: `Bearer ${tokens.admin}` } }).then((r) => r.json())) as Array<{ id: string }>;
      assert.deepEqual(jsonFile<Array<{ id: string }>>(join(atHead, 'alerts.json')).map((a) => a.id).sort(), liveAlerts.map((a) => a.id).sort());
      assert.equal(liveAlerts.length, 2);
      assert.deepEqual(jsonFile<Array<{ id: string }>>(join(atHead, 'incidents.json')).map((i) => i.id).sort(), liveIncidents.map((i) => i.id).sort());
      assert.ok(jsonFile<Array<{ key: string }>>(join(atHead, 'entities.json')).some((e) => e.key.includes('10.0.0.9')));

      // A used folder is refused; a replay in place still needs the service stopped, and says where to turn.
      const reused = await runCliAsync(['replay', '--until', String(seq), '--out', asOf, '--config', config], dir.path);
      assert.equal(reused.status, 1);
      assert.match(reused.stderr, /is not empty/);
      const beyond = await runCliAsync(['replay', '--until', '999999999', '--out', join(dir.path, 'beyond'), '--config', config], dir.path);
      assert.equal(beyond.status, 1);
      assert.match(beyond.stderr, /replay --until 999999999 is outside the live log/);
      assert.ok(!existsSync(join(dir.path, 'beyond')), 'no folder is made for a replay that cannot be');
      const inPlace = await runCliAsync(['replay', '--config', config], dir.path);
      assert.equal(inPlace.status, 1);
      assert.match(inPlace.stderr, /in use by process \d+.*vigil replay --until SEQ --out DIR/);
      assert.deepEqual(readdirSync(join(dir.path, 'store', AUDITORS_DIR)), [], 'every auditor removed its mark');
    } finally {
      await load?.stop();
      serve?.proc.kill('SIGTERM');
      await serve?.exited;
      dir.cleanup();
    }
  });

  it('vigil serve starts while an auditor holds a snapshot, an in-place replay does not, and a process holding the store unmarked is refused', async () => {
    const dir = tempDir();
    const config = writeTestConfig(dir.path);
    const store = join(dir.path, 'store');
    let serve: ServeProcess | undefined;
    let snap: ReturnType<typeof openStoreSnapshot> | undefined;
    try {
      serve = await startServe(config, dir.path);
      serve.proc.kill('SIGTERM');
      await serve.exited;
      serve = undefined;

      snap = openStoreSnapshot(store);
      const mark = join(store, AUDITORS_DIR, String(process.pid));
      assert.ok(existsSync(mark), 'the auditor marked itself');
      serve = await startServe(config, dir.path);
      assert.ok(snap.log.head().seq > 0);
      serve.proc.kill('SIGTERM');
      await serve.exited;
      serve = undefined;

      // A replay in place rebuilds the tree the auditor reads: it waits for no auditor, it refuses.
      const inPlace = runCli(['replay', '--config', config], { cwd: dir.path });
      assert.equal(inPlace.status, 1);
      assert.match(inPlace.stderr, new RegExp(`being read by process ${process.pid} `));

      // Without its mark the same reader is another process holding the store: refused, naming it.
      rmSync(mark);
      const refused = await startServe(config, dir.path).then(
        (s) => ((serve = s), 'started'),
        (err: Error) => err.message,
      );
      assert.match(refused, new RegExp(`in use by process ${process.pid}`));
    } finally {
      await snap?.close();
      serve?.proc.kill('SIGTERM');
      await serve?.exited;
      dir.cleanup();
    }
  });
});
