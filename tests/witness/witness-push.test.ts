import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { openLmdbStore } from '../../src/log/lmdb-store.js';
import { signedLog as signedLogOf } from '../helpers/signed-log.js';
import { startCheckpointer, type Transparency } from '../../src/log/checkpointer.js';
import { openNote, verifierOf } from '../../src/log/signed-note.js';
import { startWitness, type RunningWitness } from '../../src/cli/witness-serve.js';
import { createWitnessPush, type WitnessPush } from '../../src/services/witness/witness-push.js';
import { postAddCheckpoint } from '../../src/services/witness/witness-client.js';
import { WITNESS_REFUSED_RULE } from '../../src/commands/system-alerts.js';
import { startTestInstance, type TestInstance } from '../helpers/instance.js';
import { tempDir } from '../helpers/temp.js';
import { LOG_SIGNER, WITNESS_SIGNER } from '../helpers/witness.js';

const witnessKey = verifierOf(WITNESS_SIGNER);
const records = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ type: 'EventsIngested', at: '2026-11-22T10:00:00.000Z', data: { tag, i } }));

/** A real LMDB log signed with LOG_SIGNER (two of them with different records are a fork of one log). */
async function signedLog(n: number, tag: string) {
  const dir = tempDir();
  const store = openLmdbStore(dir.path);
  const log = signedLogOf(store, LOG_SIGNER);
  await log.append(records(n, tag));
  const t = await startCheckpointer(store, log, log.signer!, { everyRecords: 1_000_000, everySeconds: 3600, witnesses: [witnessKey] });
  return {
    log, t,
    async grow(k: number) { await log.append(records(k, `${tag}-more`)); await t.make(); },
    async close() { await t.stop(); await log.close(); await store.close(); dir.cleanup(); },
  };
}

describe('pushing checkpoints to a witness (C2SP tlog-witness)', () => {
  let state: ReturnType<typeof tempDir>;
  let witness: RunningWitness;
  let t: TestInstance;
  let nowMs = Date.parse('2026-12-07T12:00:00.000Z');
  const sent: string[] = [];
  const recording: typeof postAddCheckpoint = (url, body, timeoutMs, signal) => { sent.push(body); return postAddCheckpoint(url, body, timeoutMs, signal); };
  const pusher = (transparency: Transparency, url = witness.url, timeoutMs = 5000): WitnessPush => createWitnessPush({
    targets: [{ url, key: witnessKey }], accepted: [witnessKey], transparency, pipeline: t.inst.pipeline,
    intervalMs: 60_000, maxAgeMs: 900_000, timeoutMs, now: () => new Date(nowMs), logStartedAt: () => '2026-12-07T11:00:00.000Z', log: () => {}, post: recording,
  });
  const refusalRecords = () => [...t.inst.log.read(1)].filter((r) => r.type === 'WitnessRefused');
  const witnessAlerts = () => [...t.inst.pipeline.models.alerts.alerts.values()].filter((a) => a.ruleId === WITNESS_REFUSED_RULE);

  before(async () => {
    state = tempDir();
    witness = await startWitness({ witness: WITNESS_SIGNER, logKeys: [verifierOf(LOG_SIGNER)], stateDir: join(state.path, 'state'), host: '127.0.0.1', port: 0, now: () => new Date(nowMs), log: () => {} });
    t = await startTestInstance();
  });
  after(async () => { await witness.stop(); await t.close(); state.cleanup(); });

  it('sends old 0 first, merges the verified cosignature into the stored checkpoint, then proves from the size cosigned', async () => {
    const a = await signedLog(20, 'a');
    try {
      const push = pusher(a.t);
      await push.push();
      assert.equal(sent.at(-1), `old 0\n\n${a.t.checkpoint()!.split('\n\n')[0]}\n\n${a.t.checkpoint()!.split('\n\n')[1]!.split('\n')[0]}\n`);
      assert.ok(openNote(a.t.checkpoint()!, witnessKey).ok, 'the stored checkpoint carries the witness cosignature');
      const h = push.health();
      assert.equal(h.status, 'ok');
      assert.equal(h.lastCosignedAt, new Date(nowMs).toISOString());
      assert.deepEqual(h.pushed.map((p) => [p.state, p.knownSize, p.lastError]), [['ok', 20, null]]);

      await a.grow(10);
      await push.push();
      const proof = a.log.tree.consistency(20, 30).map((x) => Buffer.from(x).toString('base64'));
      assert.ok(sent.at(-1)!.startsWith(`old 20\n${proof.join('\n')}\n\n${LOG_SIGNER.name}\n30\n`), sent.at(-1));
      assert.ok(openNote(a.t.checkpoint(30)!, witnessKey).ok);
      assert.equal(push.health().pushed[0]!.knownSize, 30);

      // A pusher that does not know what the witness holds learns it from a 409 and proves from there.
      await a.grow(5);
      const fresh = pusher(a.t);
      const before = sent.length;
      await fresh.push();
      assert.deepEqual(sent.slice(before).map((b) => b.split('\n')[0]), ['old 0', 'old 30']);
      assert.deepEqual(fresh.health().pushed.map((p) => [p.state, p.knownSize]), [['ok', 35]]);
      assert.equal(refusalRecords().length, 0, 'nothing refused');
    } finally {
      await a.close();
    }
  });

  it('records a forked log\'s refusal (422) and raises one vigil.witness-refused alert, not one per push', async () => {
    const forked = await signedLog(50, 'forged');
    try {
      const push = pusher(forked.t);
      await push.push();
      assert.deepEqual(sent.slice(-2).map((b) => b.split('\n')[0]), ['old 0', 'old 35'], 'it learned the size, then proved from it');
      const h = push.health().pushed[0]!;
      assert.equal(h.state, 'refused');
      assert.match(h.lastError!, /does not hold: the tree forked/);
      assert.equal(h.nextAttemptAt, new Date(nowMs + 60_000).toISOString());
      const [refused] = refusalRecords();
      assert.deepEqual({ ...(refused!.data as Record<string, unknown>), alertId: '', url: '' }, {
        witness: WITNESS_SIGNER.name, url: '', size: 50, witnessSize: 35, status: 422,
        reason: 'the consistency proof from the size it cosigned does not hold: the tree forked', answer: (refused!.data as { answer: string }).answer, alertId: '',
      });
      assert.match((refused!.data as { answer: string }).answer, /not consistent/);
      assert.equal(witnessAlerts().length, 1);
      assert.equal(witnessAlerts()[0]!.level, 'critical');

      // Later ticks (after the back-off) refuse again: still one record and one alert.
      nowMs += 60_000;
      await push.push();
      await forked.grow(3);
      nowMs += 120_000;
      await push.push();
      assert.equal(sent.filter((b) => b.includes(`\n${LOG_SIGNER.name}\n53\n`)).length, 1, 'the grown fork was pushed too');
      assert.equal(refusalRecords().length, 1);
      assert.equal(witnessAlerts().length, 1);
    } finally {
      await forked.close();
    }
  });

  it('retries a witness it cannot reach with back-off, and raises no alert', async () => {
    const a = await signedLog(5, 'down');
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', () => resolve()));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    try {
      const push = pusher(a.t, url);
      const before = sent.length;
      await push.push();
      assert.equal(push.health().pushed[0]!.state, 'retrying');
      assert.match(push.health().pushed[0]!.lastError!, /ECONNREFUSED/);
      await push.push();
      assert.equal(sent.length, before + 1, 'not asked again before the back-off ran out');
      nowMs += 60_000;
      await push.push();
      assert.equal(sent.length, before + 2);
      assert.equal(push.health().pushed[0]!.nextAttemptAt, new Date(nowMs + 120_000).toISOString(), 'the back-off doubles');
      assert.equal(refusalRecords().length, 1, 'no refusal recorded beyond the fork\'s');
    } finally {
      await a.close();
    }
  });

  it('pushes nothing and reports off on a node that does not lead', async () => {
    const a = await signedLog(5, 'follower');
    try {
      const follower = createWitnessPush({
        targets: [{ url: witness.url, key: witnessKey }], accepted: [witnessKey], transparency: a.t, pipeline: t.inst.pipeline, leads: () => false,
        intervalMs: 60_000, maxAgeMs: 1, timeoutMs: 5000, now: () => new Date(nowMs), logStartedAt: () => '2026-12-07T11:00:00.000Z', log: () => {}, post: recording,
      });
      const before = sent.length;
      await follower.push();
      assert.equal(sent.length, before);
      assert.equal(follower.health().status, 'off');
    } finally {
      await a.close();
    }
  });

  it('bounds a request by its time-out and an answer by its size, as failures', async () => {
    const a = await signedLog(5, 'slow');
    const hold: Server = createServer((req) => { req.resume(); });
    const flood: Server = createServer((req, res) => { req.resume(); res.writeHead(200); res.end(`\u2014 w ${'A'.repeat(100_000)}\n`); });
    for (const s of [hold, flood]) await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', () => resolve()));
    const urlOf = (s: Server) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
    try {
      const slow = pusher(a.t, urlOf(hold), 300);
      await slow.push();
      assert.match(slow.health().pushed[0]!.lastError!, /no answer within 300 ms/);
      const big = pusher(a.t, urlOf(flood));
      await big.push();
      assert.match(big.health().pushed[0]!.lastError!, /answer past 16384 bytes/);
      // Stopping does not wait for a witness that holds its answer.
      const held = pusher(a.t, urlOf(hold), 10_000);
      const pushing = held.push();
      await new Promise((r) => setTimeout(r, 100));
      const started = performance.now();
      await held.stop();
      await pushing;
      assert.ok(performance.now() - started < 2000, 'the request in flight was ended');
      assert.equal(refusalRecords().length, 1);
    } finally {
      hold.closeAllConnections(); flood.closeAllConnections();
      await Promise.all([hold, flood].map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
      await a.close();
    }
  });
});
