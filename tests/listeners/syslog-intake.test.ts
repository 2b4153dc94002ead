import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_PENDING_MESSAGES, createSyslogIntake } from '../../src/services/listeners/syslog-intake.js';
import { syslogRejectionEvent } from '../../src/services/listeners/syslog-rejection.js';
import { NormalizedEventSchema } from '../../src/events/normalized-event.js';
import * as v from 'valibot';
import { startTestInstance } from '../helpers/instance.js';
import { createMetrics } from '../../src/services/metrics/metrics.js';

describe('syslog intake', () => {
  it('writes a burst of messages as one command, accepted and rejected alike, and counts them', async () => {
    const t = await startTestInstance();
    try {
      const metrics = createMetrics();
      const intake = createSyslogIntake('edge', { pipeline: t.inst.pipeline, now: () => new Date('2026-11-22T10:00:00Z'), metrics, log: () => {}, batchMs: 60_000 });
      const base = { receivedAt: '2026-11-22T10:00:00.000Z', peer: '192.0.2.5', listener: 'edge', transport: 'tcp' } as const;
      const before = t.inst.log.head().seq;
      assert.equal(intake.add({ ...base, message: '<34>1 2026-11-22T09:59:59Z web-01 sshd 77 - - Failed password for root from 198.51.100.9 port 22 ssh2' }), true);
      intake.add({ ...base, message: 'not syslog at all' });
      intake.add({ ...base, message: '<13>1 - h a - - - head', length: 99_999 }, { reason: 'too_large', error: 'frame of 99999 bytes exceeds maxMessageBytes 2048' });
      await intake.flush();
      const records = [...t.inst.log.read(before + 1)];
      assert.equal(records.length, 1, 'one record: the batch');
      const data = records[0]!.data as { normalizer: string; records: unknown[]; events: Array<{ source: { adapter: string }; class: string; activity: string }> };
      assert.equal(data.normalizer, 'syslog-rfc5424');
      assert.equal(data.records.length, 3, 'every message kept raw');
      assert.deepEqual(data.events.map((e) => [e.source.adapter, e.class === 'syslog_message_rejected' ? e.activity : 'accepted']), [['syslog-rfc5424', 'accepted'], ['vigil', 'not_rfc5424'], ['vigil', 'too_large']]);
      const text = await metrics.registry.metrics();
      assert.match(text, /vigil_syslog_messages_total\{listener="edge",outcome="accepted"\} 1/);
      assert.match(text, /vigil_syslog_messages_total\{listener="edge",outcome="rejected"\} 2/);
      await intake.stop();
    } finally {
      await t.close();
    }
  });

  it('makes rejection events that satisfy the NormalizedEvent schema and differ per message', () => {
    const rec = { message: 'garbage', receivedAt: '2026-11-22T10:00:00.000Z', peer: '::1', listener: 'l', transport: 'udp' } as const;
    const a = syslogRejectionEvent(rec, 'not_rfc5424', 'bad', '2026-11-22T10:00:01.000Z');
    const b = syslogRejectionEvent({ ...rec, message: 'garbage 2' }, 'not_rfc5424', 'bad', '2026-11-22T10:00:01.000Z');
    assert.ok(v.safeParse(NormalizedEventSchema, a).success);
    assert.notEqual(a.id, b.id);
    assert.deepEqual(a.entityKeys, ['ip:::1']);
    assert.deepEqual(syslogRejectionEvent({ ...rec, peer: 'unknown' }, 'too_large', 'x', rec.receivedAt).entityKeys, []);
  });
  it('holds messages past the flood mark, pauses the sender once full, and writes them when space returns', async () => {
    const t = await startTestInstance();
    try {
      let flooded: number | undefined = 30;
      const intake = createSyslogIntake('edge', { pipeline: t.inst.pipeline, now: () => new Date('2026-11-22T10:00:00Z'), log: () => {}, batchMs: 10, refusesWrites: () => flooded });
      const base = { receivedAt: '2026-11-22T10:00:00.000Z', peer: '192.0.2.5', listener: 'edge', transport: 'tcp' } as const;
      const before = t.inst.log.head().seq;
      let room = true;
      for (let i = 0; i < MAX_PENDING_MESSAGES && room; i++) room = intake.add({ ...base, message: `<34>1 2026-11-22T09:59:59Z web-01 sshd 77 - - line ${i}` });
      assert.equal(room, false, 'a full intake tells the stream to pause');
      await new Promise((r) => setTimeout(r, 1500));
      assert.equal(t.inst.log.head().seq, before, 'nothing written past the flood mark');
      let resumed = false;
      intake.whenRoom(() => { resumed = true; });
      flooded = undefined;
      const deadline = Date.now() + 60_000;
      while (!resumed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      assert.ok(resumed, 'the paused stream is resumed once space returns');
      await intake.flush();
      const events = [...t.inst.log.read(before + 1)].reduce((n, r) => n + ((r.data as { events?: unknown[] }).events?.length ?? 0), 0);
      assert.equal(events, MAX_PENDING_MESSAGES, 'every held message is written');
      await intake.stop();
    } finally {
      await t.close();
    }
  });

  it('on a cluster, cuts batches to the forwarded size and offers one no leader took again, with the same time, until one does', async () => {
    const t = await startTestInstance();
    try {
      const attempts: Array<{ first: string; messages: number; now: string; taken: boolean }> = [];
      let refusals = 2;
      const cluster = {
        batchBytes: 10_000,
        retrySeconds: 60,
        async submit(batch: ReadonlyArray<{ record: { message: string } }>, ctx: { now: string }, local: () => Promise<void>) {
          const taken = refusals-- <= 0;
          attempts.push({ first: batch[0]!.record.message, messages: batch.length, now: ctx.now, taken });
          if (!taken) throw new Error('no leader answered');
          await local();
        },
      };
      const intake = createSyslogIntake('edge', { pipeline: t.inst.pipeline, now: () => new Date(), log: () => {}, batchMs: 60_000, cluster });
      const base = { receivedAt: '2026-11-22T10:00:00.000Z', peer: '192.0.2.5', listener: 'edge', transport: 'tcp' } as const;
      const before = t.inst.log.head().seq;
      // A message counts 2 x its bytes + 2048: a 4000-byte one passes 10 000 alone (travels alone), four small ones fit together.
      for (let i = 0; i < 3; i++) intake.add({ ...base, message: `<13>1 - web-01 app - - - ${String(i).padEnd(4000, 'x')}` });
      for (let i = 0; i < 4; i++) intake.add({ ...base, message: `<13>1 - web-01 app - - - small ${i}` });
      await intake.flush();
      const taken = attempts.filter((a) => a.taken);
      assert.deepEqual(taken.map((b) => b.messages).sort(), [1, 1, 1, 4], 'large messages travel alone, small ones together');
      for (const refused of attempts.filter((a) => !a.taken)) {
        assert.deepEqual(taken.filter((a) => a.first === refused.first).map((a) => a.now), [refused.now], 'a refused batch is taken once later, with its time (the same event ids)');
      }
      assert.equal([...t.inst.log.read(before + 1)].length, 4, 'each batch written once');
    } finally {
      await t.close();
    }
  });
});
