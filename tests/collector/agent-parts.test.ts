import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, readFileSync, readdirSync, renameSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { generateKeyPair, verify } from '../../src/kernel/ed25519.js';
import { signedBytesOf } from '../../src/events/collector-protocol/open-envelope.js';
import { PendingBatch } from '../../src/clients/collector/batch.js';
import { FileTail } from '../../src/clients/collector/file-tail.js';
import { resequence } from '../../src/clients/collector/resequence.js';
import { backoffMs, retryAfterMs, sendOldest, type SendStatus } from '../../src/clients/collector/sender.js';
import { Spool } from '../../src/clients/collector/spool.js';
import { agentStatus } from '../../src/clients/collector/status.js';
import { StateDirInUse, lockStateDir } from '../../src/clients/collector/state-files.js';
import { runCli } from '../helpers/cli.js';
import { repoPath } from '../helpers/paths.js';
import { syslogLineEvent } from '../../src/clients/collector/syslog-line.js';
import { categoryOf } from '../../src/commands/collector-categories.js';
import { tempDir } from '../helpers/temp.js';

const lines = (t: FileTail) => t.poll(1000).map((l) => l.line);

describe('FileTail', () => {
  it('holds a partial line until its newline, follows rename rotation and copytruncate', () => {
    const dir = tempDir();
    try {
      const path = join(dir.path, 'auth.log');
      writeFileSync(path, 'a\nb');
      const t = new FileTail(path, undefined);
      assert.deepEqual(lines(t), ['a']);
      appendFileSync(path, '\nc\n');
      assert.deepEqual(lines(t), ['b', 'c']);
      appendFileSync(path, 'd\n');
      renameSync(path, `${path}.1`);
      writeFileSync(path, 'e\n');
      assert.deepEqual(lines(t), ['d', 'e']);
      // copytruncate: seen once the file is shorter than the offset, as with other log shippers.
      truncateSync(path, 0);
      assert.deepEqual(lines(t), []);
      appendFileSync(path, 'f\n');
      assert.deepEqual(lines(t), ['f']);
      t.close();
    } finally {
      dir.cleanup();
    }
  });

  it('resumes from a cursor, in the rotated file when the path moved on', () => {
    const dir = tempDir();
    try {
      const path = join(dir.path, 'syslog');
      writeFileSync(path, 'one\ntwo\n');
      const first = new FileTail(path, undefined);
      first.poll(1);
      const cursor = first.cursor()!;
      first.close();
      appendFileSync(path, 'three\n');
      renameSync(path, `${path}.1`);
      writeFileSync(path, 'four\n');
      const again = new FileTail(path, cursor);
      assert.deepEqual(lines(again), ['two', 'three', 'four']);
      again.close();
    } finally {
      dir.cleanup();
    }
  });
});

describe('PendingBatch', () => {
  it('records the cursors after the last event of each cut, not of everything read', () => {
    const b = new PendingBatch({}, { maxEvents: 2, maxBytes: 1 << 20, maxWaitMs: 1000 });
    const ev = (id: string) => ({ id }) as never;
    b.add(ev('1'), { journal: 'c1' }, 0);
    b.add(ev('2'), { file: '/f', ino: 7, next: 10 }, 0);
    b.add(ev('3'), { journal: 'c3' }, 0);
    assert.equal(b.due(0), true);
    const cut = b.cut(0);
    assert.deepEqual(cut.events.map((e) => e.id), ['1', '2']);
    assert.deepEqual(cut.cursors, { journal: 'c1', files: { '/f': { ino: 7, offset: 10 } } });
    assert.equal(b.due(500), false);
    assert.equal(b.due(1000), true);
    assert.deepEqual(b.cut(1000).cursors.journal, 'c3');
  });
});

describe('the spool seen from outside the agent', () => {
  const entry = (sequence: number) => ({ sequence, envelope: { algorithm: 'Ed25519' as const, payload: { sequence, events: ['e'] }, signature: '' }, cursors: {}, events: 3 });

  it('status changes nothing: a running agent\'s temp file and acknowledged entries stay until the agent recovers', () => {
    const dir = tempDir();
    try {
      const agent = new Spool(dir.path).recover();
      for (const s of [1, 2, 3]) agent.append(entry(s));
      agent.setLastAcked(1);
      // The agent between opening its temp file and renaming it (CI once saw status delete it there).
      writeFileSync(join(agent.dir, '000000000004.json.tmp-4242'), '{');
      const before = readdirSync(agent.dir).sort();
      const status = agentStatus(dir.path) as { backlog: { envelopes: number; events: number; oldestSequence: number; newestSequence: number; bytes: number } };
      assert.deepEqual(readdirSync(agent.dir).sort(), before);
      assert.deepEqual({ ...status.backlog, bytes: status.backlog.bytes > 0 }, { envelopes: 3, events: 9, bytes: true, oldestSequence: 1, newestSequence: 3 });
      new Spool(dir.path).recover();
      assert.deepEqual(readdirSync(agent.dir).sort(), ['000000000002.json', '000000000003.json']);
    } finally {
      dir.cleanup();
    }
  });

  it('makes nothing: a state directory that is not there is named, and one without a spool yet is empty', () => {
    const dir = tempDir();
    try {
      const missing = join(dir.path, 'no-such-state');
      const r = runCli(['collector', 'status', '--state-dir', missing]);
      assert.equal(r.status, 1);
      assert.match(r.stderr, /^vigil: there is no collector state directory at .*no-such-state: check --state-dir/);
      assert.equal(existsSync(missing), false);
      const status = agentStatus(dir.path) as { lastAckedSequence: number; backlog: { envelopes: number } };
      assert.deepEqual([status.lastAckedSequence, status.backlog.envelopes], [0, 0]);
      assert.deepEqual(readdirSync(dir.path), [], 'status made no spool directory');
    } finally {
      dir.cleanup();
    }
  });

  it('leaves out of the backlog an entry the agent removed between listing and reading', () => {
    const dir = tempDir();
    try {
      const spool = new Spool(dir.path).recover();
      for (const s of [1, 2]) spool.append(entry(s));
      const sequences = spool.sequences.bind(spool);
      // The listing still names sequence 1, which the agent has acknowledged and deleted since.
      spool.sequences = () => { const listed = sequences(); unlinkSync(join(spool.dir, '000000000001.json')); return listed; };
      const backlog = spool.backlog();
      assert.equal(backlog.envelopes, 1);
      assert.equal(backlog.oldestSequence, 2);
    } finally {
      dir.cleanup();
    }
  });
});

describe('one agent per state directory', () => {
  it('refuses a second agent or an enrollment while a live process holds it, and takes over from a killed one', async () => {
    const dir = tempDir();
    const state = join(dir.path, 'state');
    // A real process holding the state directory, as a running `vigil collector run` does.
    const holder = spawn(process.execPath, ['--input-type=module', '-e', `
      const { lockStateDir } = await import(${JSON.stringify(repoPath('dist', 'src', 'clients', 'collector', 'state-files.js'))});
      lockStateDir(process.argv[1]);
      process.stdout.write('held\\n');
      setInterval(() => {}, 1000);
    `, state], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const [first] = await once(holder.stdout!, 'data') as [Buffer];
      assert.equal(first.toString(), 'held\n');
      assert.throws(() => lockStateDir(state), (err: Error) => err instanceof StateDirInUse && err.message.includes(`in use by process ${holder.pid}`));
      const tokenFile = join(dir.path, 'enroll.token');
      writeFileSync(tokenFile, 'vgl_enroll_x\n', { mode: 0o600 });
      const enroll = runCli(['collector', 'enroll', '--server', 'http://127.0.0.1:9', '--collector-id', 'web-01', '--state-dir', state, '--token-file', tokenFile]);
      assert.equal(enroll.status, 1);
      assert.match(enroll.stderr, new RegExp(`^vigil: the collector state directory .* is in use by process ${holder.pid} `));
      // Status only reads: it works beside the holder.
      assert.equal(runCli(['collector', 'status', '--state-dir', state]).status, 0);
      holder.kill('SIGKILL');
      await once(holder, 'exit');
      const release = lockStateDir(state);
      assert.equal(readFileSync(join(state, 'agent.lock'), 'utf8').split(' ')[0], String(process.pid));
      release();
      assert.equal(existsSync(join(state, 'agent.lock')), false);
    } finally {
      holder.kill('SIGKILL');
      dir.cleanup();
    }
  });
});

describe('resequence', () => {
  it('renumbers the spool up or down, re-signed, losing and duplicating nothing', () => {
    const dir = tempDir();
    try {
      const key = generateKeyPair();
      const spool = new Spool(dir.path).recover();
      for (const s of [3, 4, 5]) spool.append({ sequence: s, envelope: { algorithm: 'Ed25519', payload: { sequence: s, events: [`e${s}`] }, signature: '' }, cursors: {}, events: 1 });
      for (const first of [4, 9, 1]) {
        resequence(spool, first, key);
        const seqs = spool.sequences();
        assert.deepEqual(seqs, [first, first + 1, first + 2]);
        assert.deepEqual(seqs.map((s) => spool.read(s).envelope.payload.events), [['e3'], ['e4'], ['e5']]);
        for (const s of seqs) {
          const e = spool.read(s).envelope;
          assert.equal(e.payload.sequence, s);
          assert.ok(verify(Buffer.from(e.signature, 'base64'), signedBytesOf(e.payload), key.publicKey));
        }
        assert.equal(spool.ack().lastAcked, first - 1);
      }
    } finally {
      dir.cleanup();
    }
  });
});

describe('syslog lines and categories', () => {
  it('recognises an sshd failure in a classic syslog line with a deterministic id', () => {
    const line = 'Nov 22 09:59:58 web-01 sshd[4242]: Failed password for alice from 192.0.2.7 port 50022 ssh2';
    const place = { path: '/var/log/auth.log', ino: 12, offset: 340 };
    const now = new Date('2026-11-22T10:00:00Z');
    const e = syslogLineEvent(line, place, now);
    assert.equal(e.class, 'authentication');
    assert.equal(e.attributes.outcome, 'failure');
    assert.equal(categoryOf(e.class), 'identity');
    assert.equal(e.source.adapter, 'syslog-file');
    assert.equal(syslogLineEvent(line, place, new Date('2026-11-22T11:00:00Z')).id, e.id);
    assert.notEqual(syslogLineEvent(line, { ...place, offset: 341 }, now).id, e.id);
    assert.equal(syslogLineEvent('not syslog at all', place, now).attributes.MESSAGE, 'not syslog at all');
  });

  it('derives categories from the table, then prefixes, else system', () => {
    assert.deepEqual(['dns_query', 'file_delete', 'auth_token', 'something_new', 'configuration_change'].map(categoryOf), ['network', 'data', 'identity', 'system', 'configuration']);
  });
});

describe('backoff', () => {
  it('grows exponentially with full jitter between half and all of the capped delay', () => {
    const retry = { initialMs: 100, maxMs: 5000 };
    assert.equal(backoffMs(0, retry, () => 0), 50);
    assert.equal(backoffMs(3, retry, () => 1), 800);
    assert.equal(backoffMs(40, retry, () => 1), 5000);
    assert.equal(backoffMs(40, retry, () => 0), 2500);
  });
});

describe('Retry-After', () => {
  it('reads seconds or an HTTP date, capped at five minutes', () => {
    const now = new Date('2026-11-22T10:00:00Z');
    assert.equal(retryAfterMs('7', now), 7000);
    assert.equal(retryAfterMs('Sun, 22 Nov 2026 10:00:30 GMT', now), 30_000);
    assert.equal(retryAfterMs('86400', now), 300_000);
    assert.equal(retryAfterMs('soon', now), undefined);
    assert.equal(retryAfterMs(null, now), undefined);
  });

  for (const [status, error] of [[429, 'ingest queue is full'], [507, 'the store\'s disk is past its flood mark']] as const) it(`a ${status} with Retry-After keeps the envelope and tells the agent how long to wait`, async () => {
    const dir = tempDir();
    const server = createServer((req, res) => {
      req.resume();
      res.writeHead(status, { 'content-type': 'application/json', 'retry-after': '3' }).end(JSON.stringify({ error }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const spool = new Spool(dir.path).recover();
      spool.append({ sequence: 1, envelope: { algorithm: 'Ed25519', payload: { sequence: 1, events: [] }, signature: '' }, cursors: {}, events: 0 });
      const status: SendStatus = { lastAttemptAt: null, lastAckedAt: null, lastAckedSequence: 0, lastError: null, consecutiveFailures: 0 };
      const r = await sendOldest({ spool, server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bearer: 'vgl_x', key: generateKeyPair(), retry: { initialMs: 10, maxMs: 100 }, log: () => {}, now: () => new Date(), status }, new AbortController().signal);
      assert.equal(r, 'retry');
      assert.equal(status.retryAfterMs, 3000);
      assert.deepEqual(spool.sequences(), [1], 'the envelope stays spooled');
    } finally {
      server.close();
      dir.cleanup();
    }
  });
});
