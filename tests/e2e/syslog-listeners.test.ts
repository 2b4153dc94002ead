import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { connect as tcpConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { join } from 'node:path';
import { apiToken, runCli, startServe, writeTestConfig, type ServeProcess } from '../helpers/cli.js';
import { tempDir } from '../helpers/temp.js';

const LOGGER = '/usr/bin/logger';
const RSYSLOGD = '/usr/sbin/rsyslogd';
const OPENSSL = '/usr/bin/openssl';

interface StoredEvent {
  id: string;
  class: string;
  activity: string;
  source: { adapter: string; instance: string };
  attributes: Record<string, unknown>;
}


/** A CA, a server certificate for 127.0.0.1, and client certificates for `web-01` and `intruder`, made with openssl. */
function makeCertificates(dir: string): void {
  const ssl = (...args: string[]) => execFileSync(OPENSSL, args, { cwd: dir, stdio: 'ignore' });
  const key = (name: string) => ssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-out', `${name}.key`);
  key('ca');
  ssl('req', '-x509', '-new', '-key', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=Vigil Test CA');
  writeFileSync(join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1\n');
  for (const [name, cn] of [['server', '127.0.0.1'], ['web01', 'web-01'], ['intruder', 'intruder']] as const) {
    key(name);
    ssl('req', '-new', '-key', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`);
    ssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', `${name}.crt`, '-days', '2', ...(name === 'server' ? ['-extfile', 'server.ext'] : []));
  }
}

/** Runs util-linux `logger` to completion. */
function logger(args: string[]): void {
  execFileSync(LOGGER, args, { stdio: 'ignore', timeout: 30_000 });
}

function send(port: number, bytes: string | Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = tcpConnect(port, '127.0.0.1', () => s.end(bytes));
    s.on('close', () => resolve());
    s.on('error', reject);
  });
}

describe('syslog listeners of a real vigil serve', () => {
  const dir = tempDir();
  let serve: ServeProcess;
  let viewer: string;
  let admin: string;
  let ports: Record<string, number>;

  before(async () => {
    const certs = join(dir.path, 'certs');
    mkdirSync(certs);
    makeCertificates(certs);
    const config = writeTestConfig(dir.path, {
      syslog: {
        listeners: [
          { name: 'tcp', protocol: 'tcp', port: 0, maxMessageBytes: 2048, messagesPerSecond: 10_000, idleTimeoutSeconds: 600 },
          { name: 'tls', protocol: 'tls', port: 0, tls: { certFile: join(certs, 'server.crt'), keyFile: join(certs, 'server.key'), clientCaFile: join(certs, 'ca.crt'), allowedClientSubjects: ['CN=web-01'] } },
          { name: 'udp', protocol: 'udp', port: 0 },
          // No CA: the one certificate whose fingerprint is listed may connect (RFC 5425 5.2).
          { name: 'tlsfp', protocol: 'tls', port: 0, tls: { certFile: join(certs, 'server.crt'), keyFile: join(certs, 'server.key'), allowedClientFingerprints: [new X509Certificate(readFileSync(join(certs, 'web01.crt'))).fingerprint256] } },
        ],
      },
    });
    viewer = apiToken(config, 'reader', 'viewer');
    admin = apiToken(config, 'boss', 'admin');
    serve = await startServe(config, dir.path);
    ports = {};
    for (const m of serve.output().matchAll(/"msg":"syslog listening","listener":"(\w+)","protocol":"\w+","address":"[^"]+","port":(\d+)/g)) ports[m[1]!] = Number(m[2]);
    assert.deepEqual(Object.keys(ports).sort(), ['tcp', 'tls', 'tlsfp', 'udp']);
  });
  after(async () => {
    serve.proc.kill('SIGTERM');
    await serve.exited;
    dir.cleanup();
  });

  const events = async (adapter: string): Promise<StoredEvent[]> => {
    const res = await fetch(`${serve.url}/api/v1/events?adapter=${adapter}&limit=1000`, { headers: { authorization: `Bearer ${viewer}` } });
    assert.equal(res.status, 200);
    return (await res.json() as { events: StoredEvent[] }).events;
  };
  /** Polls the events API until an event of `adapter` satisfies `match` (generous: the machine may be loaded). */
  const waitFor = async (adapter: string, match: (e: StoredEvent) => boolean): Promise<StoredEvent> => {
    for (let i = 0; i < 600; i++) {
      const found = (await events(adapter)).find(match);
      if (found) return found;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.fail(`no ${adapter} event matched in time`);
  };
  const withMsg = (text: string) => (e: StoredEvent) => String(e.attributes['MSG']).includes(text);

  it('stores a message from logger over TCP with octet-counting, through the RFC 5424 normalizer', async () => {
    logger(['--tcp', '--octet-count', '-n', '127.0.0.1', '-P', String(ports.tcp), '--rfc5424', '-t', 'octetapp', '--msgid', 'M1', '-p', 'auth.warning', 'hello octet-counted']);
    const e = await waitFor('syslog-rfc5424', withMsg('hello octet-counted'));
    assert.equal(e.attributes['APP-NAME'], 'octetapp');
    assert.equal(e.attributes['MSGID'], 'M1');
    assert.equal(e.attributes['SEVERITY'], 4);
    assert.equal(e.attributes['peer'], '127.0.0.1');
  });

  it('stores a message from logger over TCP with LF framing', async () => {
    logger(['--tcp', '-n', '127.0.0.1', '-P', String(ports.tcp), '--rfc5424', '-t', 'lfapp', 'hello lf-framed']);
    const e = await waitFor('syslog-rfc5424', withMsg('hello lf-framed'));
    assert.equal(e.attributes['APP-NAME'], 'lfapp');
  });

  it('stores a message from logger over UDP', async () => {
    logger(['--udp', '-n', '127.0.0.1', '-P', String(ports.udp), '--rfc5424', '-t', 'udpapp', 'hello over udp']);
    const e = await waitFor('syslog-rfc5424', withMsg('hello over udp'));
    assert.equal(e.attributes['APP-NAME'], 'udpapp');
  });

  /** Sends one octet-counted message over TLS with a client certificate; resolves when the connection closes. */
  const tlsSend = (listener: string, name: string, text: string) => new Promise<void>((resolve) => {
    const certs = join(dir.path, 'certs');
    const s = tlsConnect({ host: '127.0.0.1', port: ports[listener]!, ca: readFileSync(join(certs, 'ca.crt')), cert: readFileSync(join(certs, `${name}.crt`)), key: readFileSync(join(certs, `${name}.key`)) }, () => {
      const msg = `<14>1 2026-11-23T10:00:00.000Z web-01 tlsapp 42 - - ${text}`;
      s.end(`${Buffer.byteLength(msg)} ${msg}`);
    });
    s.on('close', () => resolve());
    s.on('error', () => resolve());
  });

  it('takes TLS from a client certificate on the subject allowlist and refuses one that is not', async () => {
    await tlsSend('tls', 'intruder', 'from the intruder');
    await tlsSend('tls', 'web01', 'hello over tls');
    const e = await waitFor('syslog-rfc5424', withMsg('hello over tls'));
    assert.equal(e.attributes['APP-NAME'], 'tlsapp');
    assert.ok(!(await events('syslog-rfc5424')).some(withMsg('from the intruder')), 'a certificate off the allowlist delivers nothing');
    const metrics = await (await fetch(`${serve.url}/metrics`, { headers: { authorization: `Bearer ${viewer}` } })).text();
    assert.match(metrics, /vigil_syslog_connections_refused_total\{listener="tls",reason="client_certificate"\} 1/);
  });

  it('takes TLS from the client certificate whose fingerprint is listed, without a CA, and refuses another', async () => {
    await tlsSend('tlsfp', 'intruder', 'fingerprint intruder');
    await tlsSend('tlsfp', 'web01', 'hello by fingerprint');
    await waitFor('syslog-rfc5424', withMsg('hello by fingerprint'));
    assert.ok(!(await events('syslog-rfc5424')).some(withMsg('fingerprint intruder')));
    const metrics = await (await fetch(`${serve.url}/metrics`, { headers: { authorization: `Bearer ${viewer}` } })).text();
    assert.match(metrics, /vigil_syslog_connections_refused_total\{listener="tlsfp",reason="client_certificate"\} 1/);
  });

  it('keeps a message that is not RFC 5424 as a detectable rejection record', async () => {
    const rule = [
      'title: Syslog message not RFC 5424', 'id: 0b9e1c1a-5d1e-4a57-9c53-6f1f0e2d7a01',
      'logsource: {product: vigil, service: syslog}', 'detection: {selection: {reason: not_rfc5424}, condition: selection}', 'level: low', '',
    ].join('\n');
    const imported = await fetch(`${serve.url}/api/v1/rules`, { method: 'POST', body: rule, headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/yaml' } });
    assert.ok(imported.status < 300, await imported.text());
    await send(ports.tcp!, '<13>Nov 23 10:00:00 oldhost legacy: a BSD-style line\n');
    const e = await waitFor('vigil', (x) => x.class === 'syslog_message_rejected' && String(x.attributes['message']).includes('BSD-style'));
    assert.equal(e.activity, 'not_rfc5424');
    assert.equal(e.source.instance, 'syslog');
    assert.equal(e.attributes['listener'], 'tcp');
    const metrics = await (await fetch(`${serve.url}/metrics`, { headers: { authorization: `Bearer ${viewer}` } })).text();
    assert.match(metrics, /vigil_syslog_messages_total\{listener="tcp",outcome="rejected"\} [1-9]/);
    const alerts = await (await fetch(`${serve.url}/api/v1/alerts`, { headers: { authorization: `Bearer ${viewer}` } })).json() as { alerts: Array<{ title: string }> };
    assert.ok(alerts.alerts.some((a) => a.title === 'Syslog message not RFC 5424'), 'the rejection raised an alert');
  });

  it('skips an oversized frame and serves other connections while a slowloris sender holds one open', async () => {
    // A slowloris: a connection that announces a frame and trickles it one byte at a time.
    const slow: Socket = tcpConnect(ports.tcp!, '127.0.0.1');
    await new Promise<void>((resolve) => slow.once('connect', () => resolve()));
    slow.write('1000 <13>1 - slow');
    const trickle = setInterval(() => slow.write('x'), 50);
    try {
      const big = `<13>1 - bighost bigapp - - - ${'A'.repeat(100_000)}`;
      const after = '<13>1 - bighost bigapp - - - after the oversized frame';
      await send(ports.tcp!, `${Buffer.byteLength(big)} ${big}${Buffer.byteLength(after)} ${after}`);
      await waitFor('syslog-rfc5424', withMsg('after the oversized frame'));
      const rejected = await waitFor('vigil', (x) => x.class === 'syslog_message_rejected' && x.activity === 'too_large');
      assert.equal(rejected.attributes['length'], Buffer.byteLength(big));
      logger(['--tcp', '--octet-count', '-n', '127.0.0.1', '-P', String(ports.tcp), '--rfc5424', '-t', 'neighbour', 'unharmed by the slowloris']);
      await waitFor('syslog-rfc5424', withMsg('unharmed by the slowloris'));
      assert.ok(!slow.destroyed, 'the slow connection is still open: it was not the reason others got through');
    } finally {
      clearInterval(trickle);
      slow.destroy();
    }
  });

  it('stores what rsyslog (Debian package) forwards with omfwd, RSYSLOG_SyslogProtocol23Format and octet-counted framing', async () => {
    const work = join(dir.path, 'rsyslog');
    mkdirSync(join(work, 'spool'), { recursive: true });
    const socketPath = join(work, 'log.sock');
    const conf = join(work, 'rsyslog.conf');
    writeFileSync(conf, [
      `global(workDirectory="${join(work, 'spool')}")`,
      'module(load="imuxsock" SysSock.Use="off")',
      `input(type="imuxsock" Socket="${socketPath}" CreatePath="on")`,
      `action(type="omfwd" target="127.0.0.1" port="${ports.tcp}" protocol="tcp" template="RSYSLOG_SyslogProtocol23Format" TCP_Framing="octet-counted")`,
      '',
    ].join('\n'));
    const rsyslogd = spawn(RSYSLOGD, ['-n', '-f', conf, '-i', join(work, 'rsyslogd.pid')], { stdio: 'ignore' });
    const exited = new Promise((resolve) => rsyslogd.once('exit', resolve));
    try {
      // logger exits 0 even when the socket is not there yet, so wait until rsyslogd has created it;
      // from then on datagrams wait in the socket until rsyslogd reads them.
      for (let i = 0; i < 600 && !existsSync(socketPath); i++) await new Promise((r) => setTimeout(r, 100));
      assert.ok(existsSync(socketPath), 'rsyslogd opened its socket');
      logger(['-u', socketPath, '-t', 'rsysapp', '-p', 'daemon.err', 'forwarded by rsyslog']);
      const e = await waitFor('syslog-rfc5424', withMsg('forwarded by rsyslog'));
      assert.equal(e.attributes['APP-NAME'], 'rsysapp');
      assert.equal(e.attributes['SEVERITY'], 3);
      assert.equal(e.attributes['VERSION'], 1);
    } finally {
      rsyslogd.kill('SIGTERM');
      await exited;
    }
  });
});
