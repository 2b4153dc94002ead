import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, chmodSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { apiToken, runCli, startServe, writeTestConfig, type ServeProcess } from '../helpers/cli.js';
import { makeEvent } from '../helpers/instance.js';
import { tempDir } from '../helpers/temp.js';
import { freePort, instanceKeyFile, startWitnessServe, type WitnessProcess } from '../helpers/witness.js';

/**
 * Issue 58, point 3, end to end: a real `vigil log witness serve` and real `vigil serve` instances pushing their
 * checkpoints to it every second. The honest instance's checkpoints get the witness's cosignature; a forked instance
 * (a second store signing with a copy of the first one's key, holding other records) is refused and raises one
 * vigil.witness-refused alert; the health detail says stale when cosignatures stop.
 */

const WITNESS_NAME = 'witness.test/e2e';

interface Health { components: { witnesses: { status: string; ageSeconds: number | null; lastCosignedAt: string | null; pushed: Array<{ name: string; state: string; knownSize: number; lastError: string | null }> } } }

/** Polls `check` every 250 ms until it returns a value, or fails with `what` after `ms`. */
async function until<T>(what: string, ms: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function instanceConfig(dir: string, witnessUrl: string, witnessKey: string): string {
  return writeTestConfig(dir, {
    log: { checkpointEverySeconds: 1, witnessPush: [{ url: witnessUrl, key: witnessKey }], witnessPushSeconds: 1, cosignedMaxAgeSeconds: 4 },
  });
}

describe('witnesses that notice in minutes (vigil serve and vigil log witness serve end to end)', () => {
  it('cosigns the honest instance\'s checkpoints, refuses a fork with one alert, and health says when cosignatures go stale', async () => {
    const dir = tempDir();
    const procs: Array<ServeProcess | WitnessProcess> = [];
    try {
      // The witness's key, and the address it will listen on (the instance is told it first).
      mkdirSync(join(dir.path, 'w'), { mode: 0o700 });
      const made = runCli(['log', 'witness-key', WITNESS_NAME, '--out', join(dir.path, 'w', 'witness.key')]);
      assert.equal(made.status, 0, made.stderr);
      const witnessKey = made.stdout.trim();
      const port = await freePort();
      const witnessUrl = `http://127.0.0.1:${port}`;

      // The honest instance starts pushing before the witness is up: its failures are retried, not alerted.
      mkdirSync(join(dir.path, 'a'));
      const configA = instanceConfig(join(dir.path, 'a'), witnessUrl, witnessKey);
      const adminA = apiToken(configA, 'admin-a', 'admin');
      const a = await startServe(configA, join(dir.path, 'a'));
      procs.push(a);
      const logKey = runCli(['log', 'public-key', '--config', configA]).stdout.trim();
      const stateDir = join(dir.path, 'w', 'state');
      const witnessArgs = ['--key', logKey, '--witness-key', join(dir.path, 'w', 'witness.key'), '--state', stateDir, '--listen', `127.0.0.1:${port}`];
      let witness = await startWitnessServe(witnessArgs, dir.path);
      procs.push(witness);
      assert.equal(witness.url, witnessUrl);

      const call = async <T>(base: string, path: string, token: string, init: RequestInit = {}): Promise<T> => {
        const res = await fetch(`${base}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' } });
        assert.ok(res.ok, `${path}: ${res.status}`);
        return await res.json() as T;
      };
      const ingest = (base: string, token: string, prefix: string) =>
        call(base, '/api/v1/events', token, { method: 'POST', body: JSON.stringify(Array.from({ length: 5 }, (_, i) => makeEvent({ id: `${prefix}-${i}` }))) });
      await ingest(a.url, adminA, 'honest');

      // Within a few push intervals the checkpoints carry the witness's cosignature.
      const cosigned = await until('a cosigned checkpoint', 30_000, async () => {
        const h = await call<Health>(a.url, '/api/v1/health', adminA);
        return h.components.witnesses.pushed[0]!.knownSize > 0 ? h : undefined;
      });
      assert.equal(cosigned.components.witnesses.status, 'ok');
      assert.equal(cosigned.components.witnesses.pushed[0]!.name, WITNESS_NAME);
      const size = cosigned.components.witnesses.pushed[0]!.knownSize;
      const atSize = await call<{ checkpoint: string }>(a.url, `/api/v1/log/checkpoint?size=${size}`, adminA);
      assert.match(atSize.checkpoint, new RegExp(`\n\u2014 ${WITNESS_NAME} `), 'the checkpoint the witness cosigned carries its line');
      await until('the latest checkpoint served with the witness\'s line', 20_000, async () => {
        const latest = await call<{ checkpoint: string }>(a.url, '/api/v1/log/checkpoint', adminA);
        return latest.checkpoint.includes(`\u2014 ${WITNESS_NAME} `) ? true : undefined;
      });
      const alertsOf = (base: string, token: string) => call<{ alerts: Array<{ id: string; title: string; level: string }> }>(base, '/api/v1/alerts?rule=vigil.witness-refused', token);
      assert.equal((await alertsOf(a.url, adminA)).alerts.length, 0, 'the honest instance is never refused');
      // The witness kept its state on disk: owner-only, in an owner-only folder.
      assert.equal(statSync(stateDir).mode & 0o777, 0o700);
      const [stateFile] = readdirSync(stateDir).filter((f) => f.endsWith('.checkpoint'));
      assert.equal(statSync(join(stateDir, stateFile!)).mode & 0o777, 0o600);
      assert.ok(readFileSync(join(stateDir, stateFile!), 'utf8').startsWith(`${logKey.split('+')[0]}\n`));

      // A forked instance: another store signing with a copy of the honest one's key, holding other records.
      const storeB = join(dir.path, 'b', 'store');
      mkdirSync(storeB, { recursive: true, mode: 0o700 });
      mkdirSync(dirname(instanceKeyFile(storeB)), { recursive: true, mode: 0o700 });
      copyFileSync(instanceKeyFile(join(dir.path, 'a', 'store')), instanceKeyFile(storeB));
      chmodSync(instanceKeyFile(storeB), 0o600);
      const configB = instanceConfig(join(dir.path, 'b'), witnessUrl, witnessKey);
      // The token first: a credential added while the service runs is picked up a moment later, not at once.
      const adminB = apiToken(configB, 'admin-b', 'admin');
      const b = await startServe(configB, join(dir.path, 'b'));
      procs.push(b);
      assert.equal(runCli(['log', 'public-key', '--config', configB]).stdout.trim(), logKey, 'the fork signs as the honest log');
      await ingest(b.url, adminB, 'forged');
      const refused = await until('the fork\'s alert', 30_000, async () => {
        const list = await alertsOf(b.url, adminB);
        return list.alerts.length > 0 ? list.alerts : undefined;
      });
      assert.equal(refused.length, 1);
      assert.equal(refused[0]!.level, 'critical');
      assert.match(refused[0]!.title, new RegExp(`^Witness ${WITNESS_NAME} refused the checkpoint of \\d+ records: `));
      const detail = await call<{ matchReason: { fields: Array<{ field: string; value: unknown }> } }>(b.url, `/api/v1/alerts/${refused[0]!.id}`, adminB);
      const facts = Object.fromEntries(detail.matchReason.fields.map((f) => [f.field, f.value]));
      assert.equal(facts.witness, WITNESS_NAME);
      assert.equal(facts.url, witnessUrl);
      assert.equal(typeof facts.size, 'number');
      assert.ok([409, 422].includes(facts.status as number), JSON.stringify(facts));
      assert.ok(typeof facts.answer === 'string' && (facts.answer as string).length > 0, 'the witness\'s answer is kept');
      const healthB = await call<Health>(b.url, '/api/v1/health', adminB);
      assert.equal(healthB.components.witnesses.pushed[0]!.state, 'refused');

      // Pushes go on (with back-off): still one alert, and the fork never cosigned, so its health turns stale.
      const staleB = await until('the fork\'s stale health', 20_000, async () => {
        const h = await call<Health>(b.url, '/api/v1/health', adminB);
        return h.components.witnesses.status === 'stale' ? h : undefined;
      });
      assert.equal(staleB.components.witnesses.lastCosignedAt, null);
      assert.equal((await alertsOf(b.url, adminB)).alerts.length, 1, 'no alert storm');
      assert.equal((await alertsOf(a.url, adminA)).alerts.length, 0);

      // The witness goes away: the honest instance retries, raises nothing, and its cosignature goes stale.
      assert.equal(await witness.stop(), 0);
      const staleA = await until('the honest instance\'s stale health', 20_000, async () => {
        const h = await call<Health>(a.url, '/api/v1/health', adminA);
        return h.components.witnesses.status === 'stale' ? h : undefined;
      });
      assert.ok(staleA.components.witnesses.ageSeconds! >= 4, 'older than cosignedMaxAgeSeconds');
      assert.notEqual(staleA.components.witnesses.pushed[0]!.lastError, null);
      const metrics = await (await fetch(`${a.url}/metrics`, { headers: { authorization: `Bearer ${adminA}` } })).text();
      const age = /^vigil_witness_cosignature_age_seconds (\d+)$/m.exec(metrics);
      assert.ok(age && Number(age[1]) >= 4, metrics.slice(0, 200));
      assert.equal((await alertsOf(a.url, adminA)).alerts.length, 0, 'an unreachable witness is no alert');

      // Started again on its state, it still holds the honest size: asked from 0 it answers 409 with that size.
      witness = await startWitnessServe(witnessArgs, dir.path);
      procs.push(witness);
      const forkNote = (await call<{ checkpoint: string }>(b.url, '/api/v1/log/checkpoint', adminB)).checkpoint;
      const asked = await fetch(`${witnessUrl}/add-checkpoint`, { method: 'POST', body: `old 0\n\n${forkNote}` });
      assert.equal(asked.status, 409);
      assert.equal(asked.headers.get('content-type'), 'text/x.tlog.size');
      assert.ok(Number((await asked.text()).trim()) >= size);
      await until('the honest instance cosigned again', 20_000, async () => {
        const h = await call<Health>(a.url, '/api/v1/health', adminA);
        return h.components.witnesses.status === 'ok' ? true : undefined;
      });
      // Only the protocol's endpoint, with bounded bodies.
      assert.equal((await fetch(`${witnessUrl}/`)).status, 404);
      assert.equal((await fetch(`${witnessUrl}/add-checkpoint`)).status, 405);
      assert.equal((await fetch(`${witnessUrl}/add-checkpoint`, { method: 'POST', body: 'x'.repeat(70_000) })).status, 413);
    } finally {
      for (const p of procs.reverse()) {
        if ('proc' in p) { p.proc.kill('SIGTERM'); await p.exited; } else await p.stop().catch(() => undefined);
      }
      dir.cleanup();
    }
  });
});
