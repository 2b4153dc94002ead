import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AlertsState } from '../../src/projections/alerts.js';
import { openInstanceStore } from '../../src/cli/instance/open.js';
import { startInstanceCheckpointer } from '../../src/cli/instance/checkpoints.js';
import { openInstanceSigner } from '../../src/cli/instance/head-signing.js';
import { archiveDirOf, expireSegments } from '../../src/services/retention/expire.js';
import { startRetention } from '../../src/services/retention/scheduler.js';
import { asRecord, type CarriedRecord } from '../../src/log/retention/plan.js';
import { encodeRecord, hashBytes } from '../../src/log/record.js';
import { logVerify } from '../../src/cli/log-commands.js';
import { startTestInstance } from '../helpers/instance.js';
import { day, dnsEvent, ingest, sshFailure } from './helpers.js';
import type { CutCommand } from '../../src/commands/pipeline.js';

/**
 * Someone with the store (service stopped) runs an expiry of their own whose carried-forward
 * records are not the originals. The cut only appends and removes a prefix, so every published
 * checkpoint stays consistent: only comparing the copies with the archive shows it.
 */
type Forgery = (carried: CarriedRecord[]) => void;
const review = (carried: CarriedRecord[]) => carried.findIndex((c) => c.type === 'AlertReviewed');
const rehash = (carried: CarriedRecord[]) => { for (const c of carried) (c as { hash: string }).hash = hashBytes(encodeRecord(asRecord(c))); };
const FORGERIES: Record<string, { forge: Forgery; live: RegExp | undefined; archives: RegExp }> = {
  'a changed copy': { forge: (cs) => { (cs[review(cs)]!.data as { reason: string }).reason = 'benign, closed'; }, live: /does not hash to the hash it names/, archives: /does not hash to the hash it names/ },
  'a changed copy with its hash recomputed': { forge: (cs) => { (cs[review(cs)]!.data as { reason: string }).reason = 'benign, closed'; rehash(cs); }, live: undefined, archives: /carried forward a copy of record \d+ that differs from the original/ },
  'a review left out': { forge: (cs) => { cs.splice(review(cs), 1); }, live: undefined, archives: /dropped record \d+ \(AlertReviewed\), which the retention policy recorded before it keeps/ },
  'a copy of a record that never was': { forge: (cs) => { cs.push({ ...cs[review(cs)]!, seq: 255 }); rehash(cs); }, live: undefined, archives: /copy of record 255 that differs from the original/ },
};

describe('a forged retention cut', () => {
  for (const [name, { forge, live, archives }] of Object.entries(FORGERIES)) {
    it(`is caught: ${name}`, async () => {
      const t = await startTestInstance({ retention: { enabled: true, evidenceDays: 30, segmentRecords: 256 } }, { builtinRules: true });
      try {
        const archiveDir = archiveDirOf(t.config.retention, t.config.storage.path);
        const deps = { log: t.inst.log, pipeline: t.inst.pipeline, carried: t.inst.carried, checkpoints: t.transparency, origin: t.transparency.verifier.name, settings: t.config.retention, archiveDir };
        await (await startRetention(deps, () => new Date(day(0)), () => {})).stop(); // records the policy, as `vigil serve` does
        t.setNow(day(0));
        await ingest(t.inst, Array.from({ length: 40 }, (_, i) => sshFailure(i, day(0))), day(0));
        const alertId = [...t.inst.writer.models.alerts.alerts.values()][0]!.id;
        assert.equal((await t.request(`/api/v1/alerts/${alertId}`, { method: 'PATCH', token: t.tokens.analyst, body: JSON.stringify({ status: 'in_review', reason: 'escalate' }) })).status, 200);
        await ingest(t.inst, Array.from({ length: 560 }, (_, i) => dnsEvent(i, day(0), `h${i % 5}`)), day(0));
        await ingest(t.inst, Array.from({ length: 300 }, (_, i) => dnsEvent(i, day(35), 'h0')), day(35));
        await t.restart(async (path) => {
          const inst = await openInstanceStore(path, { signer: await openInstanceSigner(t.config) });
          const checkpoints = await startInstanceCheckpointer(inst, t.config);
          const pipeline = Object.create(inst.pipeline, {
            cut: { value: (command: CutCommand) => {
              forge((command.events.find((e) => e.type === 'RecordsCarriedForward')!.data as { records: CarriedRecord[] }).records);
              return inst.pipeline.cut(command);
            } },
          }) as typeof inst.pipeline;
          const expired = await expireSegments({ ...deps, log: inst.log, pipeline, carried: inst.carried, checkpoints, origin: checkpoints.verifier.name }, { now: day(40) });
          assert.equal(expired.length, 2);
          await checkpoints.stop();
          await inst.close();
        });
        await t.restart(async (path) => {
          const fromCut = await logVerify(path, t.transparency.verifier);
          if (live) assert.match((fromCut as { reason?: string }).reason ?? '', live);
          else assert.equal(fromCut.ok, true, 'without the archives the originals are not there to compare with');
          const whole = await logVerify(path, t.transparency.verifier, {}, archiveDir);
          assert.equal(whole.ok, false);
          assert.match((whole as { reason: string }).reason, archives);
        });
      } finally {
        await t.close();
      }
    });
  }
});
