import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import * as v from 'valibot';
import { SyslogListenerSchema } from '../../src/services/listeners/syslog-config.js';
import type { SyslogIntake } from '../../src/services/listeners/syslog-intake.js';
import type { ListenerRecord, SyslogRejectionReason } from '../../src/services/listeners/syslog-rejection.js';
import { startStreamListener } from '../../src/services/listeners/syslog-stream.js';
import { startUdpListener } from '../../src/services/listeners/syslog-udp.js';
import { createMetrics } from '../../src/services/metrics/metrics.js';

/** An intake that only remembers what it was given. */
function recordingIntake() {
  const got: Array<{ record: ListenerRecord; reason?: SyslogRejectionReason }> = [];
  const intake: SyslogIntake = {
    add(record, rejection) {
      got.push(rejection ? { record, reason: rejection.reason } : { record });
      return true;
    },
    hasRoom: () => true,
    whenRoom: (resume) => resume(),
    flush: async () => {},
    stop: async () => {},
  };
  return { intake, got };
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 3000 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(check(), 'condition reached in time');
};

const counter = async (metrics: ReturnType<typeof createMetrics>, pattern: RegExp) => Number(pattern.exec(await metrics.registry.metrics())?.[1] ?? 0);

describe('syslog sockets', () => {
  it('UDP: one message per datagram without its trailing LF; oversized kept as a rejection; rate and source counted, not stored', async () => {
    const { intake, got } = recordingIntake();
    const metrics = createMetrics();
    const config = v.parse(SyslogListenerSchema, { name: 'u', protocol: 'udp', port: 0, maxMessageBytes: 600 });
    const listener = await startUdpListener(config, { intake, metrics, log: () => {} });
    const client = createSocket('udp4');
    const send = (text: string) => new Promise<void>((r) => client.send(Buffer.from(text), listener.address.port, '127.0.0.1', () => r()));
    try {
      await send('<13>1 - h a - - - one\n');
      await send(`<13>1 - h a - - - ${'z'.repeat(1000)}`);
      await until(() => got.length === 2);
      assert.equal(got[0]!.record.message, '<13>1 - h a - - - one');
      assert.equal(got[0]!.record.transport, 'udp');
      assert.equal(got[1]!.reason, 'too_large');
      assert.equal(got[1]!.record.length, 1018);
    } finally {
      client.close();
      await listener.stop();
    }
    // One message a second: a burst of six sent back to back cannot all fit (it would take five seconds between sends).
    const slow = await startUdpListener(v.parse(SyslogListenerSchema, { name: 'q', protocol: 'udp', port: 0, messagesPerSecond: 1 }), { intake, metrics, log: () => {} });
    const burst = createSocket('udp4');
    try {
      const before = got.length;
      for (let i = 0; i < 6; i++) await new Promise<void>((r) => burst.send(Buffer.from(`<13>1 - h a - - - burst ${i}`), slow.address.port, '127.0.0.1', () => r()));
      const limited = () => counter(metrics, /vigil_syslog_messages_total\{listener="q",outcome="rate_limited"\} (\d+)/);
      for (let i = 0; i < 3000 && got.length - before + (await limited()) < 6; i++) await new Promise((r) => setTimeout(r, 10));
      assert.ok((await limited()) >= 1, 'a burst past the rate is dropped and counted');
      assert.equal(got.length - before + (await limited()), 6, 'every datagram is either kept or counted');
    } finally {
      burst.close();
      await slow.stop();
    }
    const refusing = await startUdpListener(v.parse(SyslogListenerSchema, { name: 'r', protocol: 'udp', port: 0, allowedSources: ['10.0.0.0/8'] }), { intake, metrics, log: () => {} });
    const other = createSocket('udp4');
    try {
      const before = got.length;
      await new Promise<void>((r) => other.send(Buffer.from('<13>1 - h a - - - from outside'), refusing.address.port, '127.0.0.1', () => r()));
      for (let i = 0; i < 3000 && (await counter(metrics, /vigil_syslog_messages_total\{listener="r",outcome="source_refused"\} (\d+)/)) === 0; i++) await new Promise((r) => setTimeout(r, 10));
      assert.equal(await counter(metrics, /vigil_syslog_messages_total\{listener="r",outcome="source_refused"\} (\d+)/), 1);
      assert.equal(got.length, before);
    } finally {
      other.close();
      await refusing.stop();
    }
  });

  it('TCP: refuses connections past maxConnections and from outside the allowed sources, and counts them', async () => {
    const { intake, got } = recordingIntake();
    const metrics = createMetrics();
    const listener = await startStreamListener(v.parse(SyslogListenerSchema, { name: 't', protocol: 'tcp', port: 0, maxConnections: 1 }), { intake, metrics, log: () => {} });
    const first = connect(listener.address.port, '127.0.0.1');
    try {
      await new Promise<void>((r) => first.once('connect', () => r()));
      first.write('<13>1 - h a - - - held open\n');
      await until(() => got.length === 1);
      const second = connect(listener.address.port, '127.0.0.1');
      await new Promise<void>((r) => second.once('close', () => r()));
      assert.equal(await counter(metrics, /vigil_syslog_connections_refused_total\{listener="t",reason="max_connections"\} (\d+)/), 1);
      assert.equal(await counter(metrics, /vigil_syslog_connections\{listener="t"\} (\d+)/), 1);
    } finally {
      first.destroy();
      await listener.stop();
    }
    const refusing = await startStreamListener(v.parse(SyslogListenerSchema, { name: 's', protocol: 'tcp', port: 0, allowedSources: ['10.0.0.0/8'] }), { intake, metrics, log: () => {} });
    try {
      const outsider = connect(refusing.address.port, '127.0.0.1');
      outsider.on('error', () => {});
      outsider.once('connect', () => outsider.write('<13>1 - h a - - - outsider\n'));
      await new Promise<void>((r) => outsider.once('close', () => r()));
      assert.equal(await counter(metrics, /vigil_syslog_connections_refused_total\{listener="s",reason="source"\} (\d+)/), 1);
      assert.ok(!got.some((g) => g.record.message.includes('outsider')));
    } finally {
      await refusing.stop();
    }
  });
});
