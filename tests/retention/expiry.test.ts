import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Packr } from 'msgpackr';
import type { AlertsState } from '../../src/projections/alerts.js';
import { EVIDENCE_DBS, decodeStored, hasEvent } from '../../src/projections/evidence.js';
import { RETENTION, type RetentionState } from '../../src/projections/retention.js';
import { verifyLog } from '../../src/log/verify.js';
import { verifyTree } from '../../src/log/verify-tree.js';
import { verifyWithArchives } from '../../src/services/retention/verify-archives.js';
import { startRetention } from '../../src/services/retention/scheduler.js';
import { archiveDirOf } from '../../src/services/retention/expire.js';
import { logVerify, replay } from '../../src/cli/log-commands.js';
import { foldFromCutOffThread } from '../../src/projections/refold.js';
import { startTestInstance, type TestInstance } from '../helpers/instance.js';
import { day, dnsEvent, dump, ingest, sshFailure } from './helpers.js';

const packr = new Packr({ useRecords: false, mapsAsObjects: true });

/** An instance with a month-old history: sshd failures (an alert, reviewed), DNS evidence and API requests at day 0, fresh evidence at day 35. */
async function history(): Promise<{ t: TestInstance; alertId: string; oldIds: string[]; newIds: string[] }> {
  const t = await startTestInstance({ retention: { enabled: true, evidenceDays: 30, segmentRecords: 256 } }, { builtinRules: true });
  t.setNow(day(0));
  await ingest(t.inst, Array.from({ length: 40 }, (_, i) => sshFailure(i, day(0))), day(0));
  const alerts = [...t.inst.writer.models.alerts.alerts.values()];
  assert.ok(alerts.length > 0, 'the sshd failures raise an alert');
  const alertId = alerts[0]!.id;
  const review = await t.request(`/api/v1/alerts/${alertId}`, { method: 'PATCH', token: t.tokens.analyst, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ status: 'in_review', reason: 'looking' }) });
  assert.equal(review.status, 200);
  const old = Array.from({ length: 560 }, (_, i) => dnsEvent(i, day(0), i < 300 ? 'gone' : `h${i % 5}`));
  await ingest(t.inst, old, day(0));
  t.setNow(day(35));
  const fresh = Array.from({ length: 300 }, (_, i) => dnsEvent(i, day(35), 'h0'));
  await ingest(t.inst, fresh, day(35));
  return { t, alertId, oldIds: old.map((e) => e.id), newIds: fresh.map((e) => e.id) };
}

describe('retention expiry', () => {
  it('archives expired segments, removes them, carries what outlives them forward, and verifies from the cut and with the archives', async () => {
    const { t, alertId, oldIds, newIds } = await history();
    try {
      const inst = t.inst;
      const clock = day(40);
      const runner = await startRetention({
        log: inst.log, pipeline: inst.pipeline, carried: inst.carried, checkpoints: t.transparency, origin: t.transparency.verifier.name,
        settings: t.config.retention, archiveDir: archiveDirOf(t.config.retention, t.config.storage.path), storePath: t.config.storage.path,
      }, () => new Date(clock), () => {});
      const policy = inst.writer.models.retention.policy;
      assert.deepEqual(policy, { enabled: true, days: { evidence: 30, alerts: 365, reviews: 365, incidents: 365, access: 365, audit: 730 }, segmentRecords: 256 }, 'the policy in force is recorded');

      const headBefore = inst.log.head().seq;
      const seqOf = (id: string) => decodeStored(inst.runtime.index.get(EVIDENCE_DBS.byId, id) as Uint8Array).seq;
      const expiring = oldIds.filter((id) => seqOf(id) <= 512);
      const staying = oldIds.filter((id) => seqOf(id) > 512);
      assert.ok(expiring.length > 300 && staying.length > 0);
      const expired = await runner.run();
      assert.deepEqual(expired.map((e) => [e.fromSeq, e.toSeq]), [[1, 256], [257, 512]], 'the two segments wholly older than 30 days expire; the one reaching day 35 stays');
      assert.ok(expired[0]!.carried > 0 && expired.every((e) => e.dropped > 0), "the first segment carries the alert, its review and the API records forward");
      const dir = archiveDirOf(t.config.retention, t.config.storage.path);
      assert.deepEqual(readdirSync(dir).sort(), expired.map((e) => e.file));
      assert.equal(inst.log.first(), 513);
      assert.deepEqual([...inst.log.read(1, 512)], [], 'the expired records are gone from the live store');
      assert.ok(inst.log.head().seq > headBefore, 'the carried records and the cuts were appended');
      assert.deepEqual(await runner.run(), [], 'nothing more is old enough');
      const cuts = [...inst.log.read(inst.log.first())].filter((r) => r.type === 'LogSegmentsExpired');
      assert.deepEqual(cuts.map((r) => (r.data as { archives: Array<{ file: string }> }).archives.map((a) => a.file)), [expired.map((e) => e.file)], 'segments due together expire by one cut, which names both archives');

      const cut = inst.log.cut()!;
      const chain = verifyLog(inst.log, cut);
      assert.equal(chain.ok, true, JSON.stringify(chain));
      assert.equal(chain.records, inst.log.head().seq - 512);
      const tree = verifyTree(inst.store, inst.log, t.transparency.verifier);
      assert.equal(tree.ok, true, JSON.stringify(tree));
      const stored = (store = inst.store): Array<[number, string]> => [...store.db<string, number>('checkpoints', { keyEncoding: 'uint32' }).getRange({})].map(({ key, value }) => [key, value]);
      const whole = verifyWithArchives(inst.log, inst.carried, dir, stored(), t.transparency.verifier);
      assert.deepEqual(whole.ok && [whole.records, whole.archives], [inst.log.head().seq, 2], JSON.stringify(whole));
      // Proofs of the whole log still work across the cut: the tree kept its nodes.
      assert.equal(Buffer.from(inst.log.tree.root(512)).toString('base64'), cut.treeRoot);
      // A proof that needs an expired record's bytes is a 404 that says where it is made, not a 500.
      const size = t.transparency.committedSize();
      const proofOf = async (query: string) => {
        const res = await t.request(`/api/v1/log/proofs/${query}`, { token: t.tokens.viewer });
        return { status: res.status, body: await res.json() as { error?: string; consistency_path?: string[]; inclusion_path?: string[] } };
      };
      for (const query of [`inclusion?seq=5&size=${size}`, `consistency?from=300&to=${size}`]) {
        const { status, body } = await proofOf(query);
        assert.equal(status, 404, query);
        assert.match(body.error ?? '', /retention removed from the live log \(it starts at record 513\): make it from the archive/, query);
      }
      assert.equal((await proofOf(`consistency?from=512&to=${size}`)).status, 200, 'from the cut, a consistency proof needs only stored nodes');
      assert.equal((await proofOf(`inclusion?seq=${size}&size=${size}`)).status, 200);

      // Read models follow: expired evidence is gone from the indexes, the alert still reads.
      assert.equal(expiring.some((id) => hasEvent(inst.runtime, id)), false);
      assert.equal([...staying, ...newIds].every((id) => hasEvent(inst.runtime, id)), true);
      await inst.readYourWrites();
      await inst.readSide.settle();
      for (const { key } of inst.reads.db<Uint8Array>(EVIDENCE_DBS.byTime).getRange({})) {
        const seq = (key as number[]).at(-1)!;
        assert.ok(seq >= 513 || inst.carried.get(seq) !== undefined, `the event index points at record ${seq}, which is neither live nor carried`);
      }
      const graph = await inst.readSide.snapshot('graph') as { e: { key: string[] } };
      assert.equal(graph.e.key.includes('host:gone'), false, 'an entity only expired evidence referred to is dropped');
      assert.equal(graph.e.key.includes('host:h0'), true);
      const res = await t.request(`/api/v1/alerts/${alertId}`, { token: t.tokens.viewer });
      assert.equal(res.status, 200);
      const alert = await res.json() as { matchReason: unknown; evidence: Array<{ eventId: string; archived?: { file: string } }>; reviewHistory: Array<{ to: string; seq: number }> };
      assert.ok(alert.matchReason);
      assert.ok(alert.evidence.length > 0 && alert.evidence.every((e) => e.archived?.file === expired[0]!.file), 'its evidence says which archive holds it');
      assert.equal(alert.reviewHistory.at(-1)?.to, 'in_review');
      const reviewed = inst.runtime.record(alert.reviewHistory.at(-1)!.seq);
      assert.equal(reviewed?.type, 'AlertReviewed', 'a carried record still reads by its original seq');

      // Replay from the cut reproduces the read models, and so does a restart.
      const live = await dump(inst);
      // The cut's refold of the writer's heap models ran in a worker thread; it folds what a replay does.
      const offThread = await foldFromCutOffThread(t.config.storage.path, inst.log.first());
      assert.equal(offThread.seq, inst.log.head().seq);
      assert.deepEqual(offThread.checkpoints.map(([name, cp]) => [name, packr.unpack(cp.state)]), (live as { heap: unknown }).heap);
      await Promise.all([inst.runtime.rebuild(), inst.readSide.rebuild(inst.log.head().seq)]);
      assert.deepEqual(await dump(inst), live, 'rebuilt from the cut');
      await runner.stop();
      await t.restart();
      assert.deepEqual(await dump(t.inst), live, 'restored after a restart');

      // A tampered archive fails the whole-history verification, naming it.
      const file = join(dir, expired[1]!.file);
      const lines = readFileSync(file, 'utf8').split('\n');
      lines[3] = lines[3]!.replace('"dns-', '"dnz-');
      writeFileSync(file, lines.join('\n'));
      const bad = verifyWithArchives(t.inst.log, t.inst.carried, dir, stored(t.inst.store), t.transparency.verifier);
      assert.equal(bad.ok, false);
      assert.match((bad as { reason: string }).reason, /archive segment-000000000257-000000000512\.jsonl is not the file the cut recorded/);
    } finally {
      await t.close();
    }
  });

  it('vigil log verify passes from the cut, and with --archives over the whole history', async () => {
    const { t } = await history();
    const dir = archiveDirOf(t.config.retention, t.config.storage.path);
    const runner = await startRetention({
      log: t.inst.log, pipeline: t.inst.pipeline, carried: t.inst.carried, checkpoints: t.transparency, origin: t.transparency.verifier.name,
      settings: t.config.retention, archiveDir: dir,
    }, () => new Date(day(40)), () => {});
    await runner.run();
    await runner.stop();
    const head = t.inst.log.head().seq;
    await t.restart(async (path) => {
      const fromCut = await logVerify(path, t.transparency.verifier);
      assert.equal(fromCut.ok, true, JSON.stringify(fromCut));
      assert.equal(fromCut.ok && fromCut.records, head - 512);
      const whole = await logVerify(path, t.transparency.verifier, {}, dir) as { ok: boolean; history?: { records: number; archives: number } };
      assert.equal(whole.ok, true, JSON.stringify(whole));
      assert.deepEqual([whole.history?.records, whole.history?.archives], [head, 2]);
      const replayed = await replay(path, undefined);
      assert.equal(replayed.until, head, 'vigil replay folds a cut store from the cut');
      assert.equal((await logVerify(path, t.transparency.verifier)).ok, true, 'and leaves it verifiable');
      const missing = await logVerify(path, t.transparency.verifier, {}, join(path, 'no-such-dir'));
      assert.equal(missing.ok, false, 'without the archives the whole history cannot be verified');
      assert.ok(existsSync(dir));
    });
    await t.close();
  });
});
