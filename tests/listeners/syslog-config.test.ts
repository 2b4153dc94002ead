import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as v from 'valibot';
import { ConfigSchema } from '../../src/services/config-schema.js';

const parse = (syslog: unknown) => v.safeParse(ConfigSchema, { syslog });
const messages = (r: ReturnType<typeof parse>) => (r.success ? [] : r.issues.map((i) => i.message));

describe('syslog.listeners configuration', () => {
  it('has no listener by default and binds a listener to loopback, allowing loopback sources, by default', () => {
    const none = v.parse(ConfigSchema, {});
    assert.deepEqual(none.syslog.listeners, []);
    const one = v.parse(ConfigSchema, { syslog: { listeners: [{ name: 'edge', protocol: 'tcp', port: 6514 }] } });
    const l = one.syslog.listeners[0]!;
    assert.equal(l.host, '127.0.0.1');
    assert.deepEqual(l.allowedSources, ['127.0.0.0/8', '::1/128']);
    assert.ok(l.maxMessageBytes >= 2048 && l.maxConnections > 0 && l.messagesPerSecond > 0 && l.idleTimeoutSeconds > 0);
  });

  it('refuses a tls listener without certificates, tls on a plain listener, duplicate names and bad ranges', () => {
    assert.match(messages(parse({ listeners: [{ name: 'a', protocol: 'tls', port: 1 }] })).join(), /tls listener needs/);
    assert.match(messages(parse({ listeners: [{ name: 'a', protocol: 'tcp', port: 1, tls: { certFile: '/c', keyFile: '/k' } }] })).join(), /only a tls listener/);
    assert.match(messages(parse({ listeners: [{ name: 'a', protocol: 'udp', port: 1 }, { name: 'a', protocol: 'tcp', port: 2 }] })).join(), /unique/);
    assert.match(messages(parse({ listeners: [{ name: 'a', protocol: 'udp', port: 1, allowedSources: ['10.0.0.0/33'] }] })).join(), /CIDR/);
    assert.match(messages(parse({ listeners: [{ name: 'a', protocol: 'udp', port: 1, maxMessageBytes: 100_000 }] })).join(), /65507/);
    assert.match(messages(parse({ listeners: [{ name: 'a', protocol: 'tcp', port: 1, unknown: 1 }] })).join(), /unknown|Invalid key|never/i);
  });

  it('needs a CA for a subject allowlist but takes fingerprints alone, normalizing their form', () => {
    assert.match(messages(parse({ listeners: [{ name: 'a', protocol: 'tls', port: 1, tls: { certFile: '/c', keyFile: '/k', allowedClientSubjects: ['CN=web-01'] } }] })).join(), /needs clientCaFile/);
    const fp = 'AB:'.repeat(31) + 'AB';
    const ok = v.parse(ConfigSchema, { syslog: { listeners: [{ name: 'a', protocol: 'tls', port: 1, tls: { certFile: '/c', keyFile: '/k', allowedClientFingerprints: [fp] } }] } });
    assert.deepEqual(ok.syslog.listeners[0]!.tls!.allowedClientFingerprints, ['ab'.repeat(32)]);
  });
});
