import { after, afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openLmdbStore, type LmdbStore } from '../../src/log/lmdb-store.js';
import { connectJetStream, ensureStream, type JetStreamConnection } from '../../src/log/jetstream-connect.js';
import { NotLeaderError, openJetStreamLog, type JetStreamEventLog } from '../../src/log/jetstream-log.js';
import type { JetStreamConfig } from '../../src/log/jetstream-config.js';
import { FatalStorageError } from '../../src/log/event-log.js';
import { verifyLog } from '../../src/log/verify.js';
import { tempDir } from '../helpers/temp.js';
import { startNats, type NatsCluster } from '../helpers/nats.js';
import { freePort } from '../setup/processes.js';
import { logContract } from './log-contract.js';

let cluster: Promise<NatsCluster> | undefined;
const nats = () => (cluster ??= startNats(1));

/**
 * Connections a test opened and has not closed: a test that fails midway leaves its nodes open,
 * and a NATS client reconnects for ever (as the service's must) once the server is stopped, which
 * would keep this file's process alive and the whole run waiting. Each is closed after its test.
 */
const open = new Set<{ close(): Promise<void> }>();
async function connect(config: JetStreamConfig, name: string): Promise<JetStreamConnection> {
  const conn = await connectJetStream(config, name);
  const entry = { close: () => conn.close() };
  open.add(entry);
  const close = conn.close.bind(conn);
  conn.close = async () => { open.delete(entry); await close(); };
  return conn;
}
afterEach(async () => {
  for (const c of [...open]) await c.close().catch(() => undefined);
  open.clear();
});
after(async () => { if (cluster) await (await cluster).stop(); });

/** A test that waits on NATS fails after this long instead of holding the run. */
const TEST_TIMEOUT_MS = 120_000;

let streams = 0;
/** A fresh stream on the test server, R1. */
async function freshConfig(): Promise<JetStreamConfig> {
  const { urls } = await nats();
  return { servers: [...urls], stream: `T${process.pid}_${++streams}`, replicas: 1, leaseSeconds: 10, publishTimeoutSeconds: 10 };
}

async function openNode(config: JetStreamConfig, path: string, onFatal?: (err: Error) => void): Promise<{ conn: JetStreamConnection; store: LmdbStore; log: JetStreamEventLog }> {
  const conn = await connect(config, 'test');
  await ensureStream(conn, config, 8 * 1024 * 1024);
  const store = openLmdbStore(path);
  const log = await openJetStreamLog(store, conn, onFatal);
  const node = { conn, store, log };
  // Left open by a failed test: the log (its lease timer) and the store go before the connection.
  const entry = { close: async () => { open.delete(entry); await log.close().catch(() => undefined); await store.close().catch(() => undefined); await conn.close(); } };
  open.add(entry);
  nodes.set(node, entry);
  return node;
}

const nodes = new WeakMap<object, { close(): Promise<void> }>();

async function closeNode(n: { conn: JetStreamConnection; store: LmdbStore; log: JetStreamEventLog }): Promise<void> {
  const entry = nodes.get(n);
  if (entry) open.delete(entry);
  await n.log.close();
  await n.store.close();
  await n.conn.close();
}

logContract({
  name: 'JetStream',
  async open() {
    const config = await freshConfig();
    const dir = tempDir();
    let node = await openNode(config, dir.path);
    await node.log.lead();
    return {
      log: node.log,
      async reopen() {
        await closeNode(node);
        node = await openNode(config, dir.path);
        await node.log.lead();
        return node.log;
      },
      async tamper(seq, bytes) {
        // The local copy is what reads and verification see: tamper with it.
        const db = node.store.db<Uint8Array, number>('log', { encoding: 'binary', keyEncoding: 'uint32' });
        if (bytes) await db.put(seq, bytes); else await db.remove(seq);
      },
      async close() {
        await closeNode(node);
        dir.cleanup();
      },
    };
  },
});

const rec = (type: string, data: unknown) => ({ type, at: '2026-11-23T00:00:00Z', data });

describe('JetStream log', { timeout: TEST_TIMEOUT_MS }, () => {
  it('keeps one batch in one stream message, and a fresh store copies the stream', async () => {
    const config = await freshConfig();
    const a = tempDir();
    const b = tempDir();
    try {
      const writer = await openNode(config, a.path);
      await writer.log.lead();
      await writer.log.append([rec('A', 1), rec('B', 2), rec('C', 3)]);
      await writer.log.append([rec('D', 4)]);
      assert.equal(writer.log.position(), 2);
      const info = await writer.conn.jsm.streams.info(config.stream);
      assert.equal(info.state.messages, 2);
      const copy = await openNode(config, b.path);
      assert.deepEqual(copy.log.head(), writer.log.head());
      assert.deepEqual([...copy.log.read(1)].map((r) => r.type), ['A', 'B', 'C', 'D']);
      assert.deepEqual(verifyLog(copy.log), { ok: true, records: 4, head: writer.log.head().hash });
      await closeNode(copy);
      await closeNode(writer);
    } finally { a.cleanup(); b.cleanup(); }
  });

  it('refuses a write on a node that does not lead', async () => {
    const config = await freshConfig();
    const dir = tempDir();
    try {
      const node = await openNode(config, dir.path);
      assert.throws(() => node.log.stage([rec('A', 1)]), NotLeaderError);
      await closeNode(node);
    } finally { dir.cleanup(); }
  });

  it('fails a deposed writer whose stream moved on, and the stream keeps only the new writer\'s batch', async () => {
    const config = await freshConfig();
    const a = tempDir();
    const b = tempDir();
    try {
      const old = await openNode(config, a.path, () => undefined);
      await old.log.lead();
      await old.log.append([rec('A', 1)]);
      const next = await openNode(config, b.path);
      await next.log.lead();
      await next.log.append([rec('B', 2)]);
      await assert.rejects(old.log.append([rec('X', 9)]), FatalStorageError);
      const info = await next.conn.jsm.streams.info(config.stream);
      assert.equal(info.state.messages, 2);
      assert.deepEqual([...old.log.read(1)].map((r) => r.type), ['A'], 'the refused batch never reaches the local copy');
      await closeNode(old);
      const again = await openNode(config, a.path);
      assert.deepEqual([...again.log.read(1)].map((r) => r.type), ['A', 'B']);
      await closeNode(again);
      await closeNode(next);
    } finally { a.cleanup(); b.cleanup(); }
  });

  it('follows batches another node appends', async () => {
    const config = await freshConfig();
    const a = tempDir();
    const b = tempDir();
    try {
      const leader = await openNode(config, a.path);
      await leader.log.lead();
      await leader.log.append([rec('A', 1)]);
      const follower = await openNode(config, b.path);
      const applied: number[] = [];
      const stop = await follower.log.replicate({ apply: () => () => undefined, settle: (rs) => applied.push(...rs.map((r) => r.seq)) });
      await leader.log.append([rec('B', 2), rec('C', 3)]);
      while (follower.log.head().seq < 3) await new Promise((r) => setTimeout(r, 20));
      await stop();
      assert.deepEqual(applied, [2, 3]);
      assert.deepEqual(follower.log.head(), leader.log.head());
      await closeNode(follower);
      await closeNode(leader);
    } finally { a.cleanup(); b.cleanup(); }
  });

  it('replaces a consumer that stalls, while catching up and while following, and copies every batch', async () => {
    const config = await freshConfig();
    const a = tempDir();
    const b = tempDir();
    try {
      const leader = await openNode(config, a.path);
      await leader.log.lead();
      await leader.log.append([rec('A', 1)]);
      // The follower's consumers 1 (catching up at open) and 3 (following) deliver nothing and never
      // end, as a pull consumer whose server went away mid-pull can; the others are the real ones.
      const conn = await connect(config, 'stalling');
      let consumes = 0;
      const stalled = () => {
        let end = () => {};
        const ended = new Promise<void>((r) => { end = r; });
        return { async *[Symbol.asyncIterator]() { await ended; }, close: async () => { end(); } };
      };
      const consumers = new Proxy(conn.js.consumers, {
        get: (target, key) => key !== 'get' ? Reflect.get(target, key) : async (...args: Parameters<typeof target.get>) => {
          const consumer = await target.get(...args);
          return new Proxy(consumer, {
            get: (c, k) => k !== 'consume' ? Reflect.get(c, k) : async (...o: Parameters<typeof c.consume>) => ([1, 3].includes(++consumes) ? stalled() : c.consume(...o)),
          });
        },
      });
      const js = new Proxy(conn.js, { get: (target, key) => (key === 'consumers' ? consumers : Reflect.get(target, key)) });
      const notices: string[] = [];
      const store = openLmdbStore(b.path);
      const log = await openJetStreamLog(store, { ...conn, js }, undefined, { stallCheckMs: 300, notice: (line) => notices.push(String(line.msg)) });
      assert.equal(log.head().seq, 1, 'caught up at open through a second consumer');
      // Waits for the batches to be in the local copy (settled), not only staged: the head counts a
      // batch from when it is staged, and a loaded machine commits it a while later.
      let settled = 0;
      const stop = await log.replicate({ apply: () => () => undefined, settle: (rs) => { settled = Math.max(settled, ...rs.map((r) => r.seq)); } });
      await leader.log.append([rec('B', 2), rec('C', 3)]);
      const deadline = Date.now() + 10_000;
      while (settled < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      await stop();
      assert.deepEqual(log.head(), leader.log.head());
      assert.ok(consumes >= 4, `${consumes} consumers`);
      assert.deepEqual([...new Set(notices)], [
        'catching up with the stream stalled: going on with a new consumer',
        'the local copy stopped following the stream: following again with a new consumer',
      ]);
      assert.deepEqual(verifyLog(log), { ok: true, records: 3, head: leader.log.head().hash });
      await log.close();
      await store.close();
      await conn.close();
      await closeNode(leader);
    } finally { a.cleanup(); b.cleanup(); }
  });

  it('refuses a stream whose settings could lose records', async () => {
    const config = await freshConfig();
    const conn = await connect(config, 'test');
    try {
      await conn.jsm.streams.add({ name: config.stream, subjects: [conn.subject], max_age: 60_000_000_000 });
      await assert.rejects(ensureStream(conn, config, 1 << 20), /max_age|storage|deny_delete/);
    } finally { await conn.close(); }
  });
});

describe('connecting to NATS', { timeout: TEST_TIMEOUT_MS }, () => {
  it('refuses to start with the servers named and what to do when none answers', async () => {
    const port = await freePort();
    await assert.rejects(
      connectJetStream({ servers: [`nats://127.0.0.1:${port}`], stream: 'T', replicas: 1, leaseSeconds: 10, publishTimeoutSeconds: 10 }, 'test'),
      (err: Error) => {
        assert.match(err.message, new RegExp(`^refusing to start: cannot reach NATS at nats://127\\.0\\.0\\.1:${port} \\(.+\\); start the NATS servers first`));
        return true;
      },
    );
  });
});
