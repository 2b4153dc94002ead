import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import type { NormalizedEvent } from '../../src/events/normalized-event.js';
import { NORMALIZERS } from '../../src/normalizers/registry.js';
import { EVENT_FIELDS, MAX_OBSERVABLES, observablesOf } from '../../src/detection/intel/event-fields.js';
import {
  eventDomain,
  eventEmail,
  eventHash,
  eventIp,
  eventUrl,
  sysmonHashes,
} from '../../src/detection/intel/event-values.js';
import { fixturePath } from '../helpers/paths.js';
import { fixtureEvents, zeek } from './event-fields-fixtures.js';

const CTX = { ingestedAt: '2025-01-01T00:00:00Z' } as const;

const has = (event: NormalizedEvent, field: string, type: string, value: string): void => {
  const found = observablesOf(event);
  assert.ok(
    found.some((o) => o.field === field && o.type === type && o.value === value),
    `expected ${field} ${type} ${value} in ${JSON.stringify(found)}`,
  );
};

describe('observablesOf on real normalized events', () => {
  it("reads a Zeek conn record's two addresses under their Zeek names", () => {
    const [e] = zeek('conn', (r) => r['id.resp_h'] === '184.168.176.1');
    has(e!, 'id.orig_h', 'ipv4', '192.168.4.142');
    has(e!, 'id.resp_h', 'ipv4', '184.168.176.1');
    // The endpoints and entity keys hold the same addresses: named once, by the first field.
    assert.equal(observablesOf(e!).filter((o) => o.value === '184.168.176.1').length, 1);
  });

  it('reads a Zeek dns query and its answers, addresses and names alike', () => {
    const events = fixtureEvents('network-monitor', ['network-monitor', 'wrccdc-json-streaming', 'dns.jsonl'], (r) =>
      Array.isArray(r['answers']),
    );
    const e = events.find((x) => x.attributes['query'] === 'ise.wrccdc.org')!;
    has(e, 'query', 'domain', 'ise.wrccdc.org');
    has(e, 'answers', 'domain', 'ise.wrccdc.cpp.edu');
    has(e, 'answers', 'ipv4', '134.71.3.16');
  });

  it("makes a Zeek http request's URL of host and uri, and reads its host", () => {
    const [e] = zeek('http', (r) => r['host'] === 'download.microsoft.com');
    has(
      e!,
      'host+uri',
      'url',
      'http://download.microsoft.com/download/d/e/5/de5351d6-4463-4cc3-a27c-3e2274263c43/wfetch.exe',
    );
    has(e!, 'host+uri', 'domain', 'download.microsoft.com');
  });

  it("reads a Zeek files record's md5, sha1 and sha256", () => {
    const [e] = zeek('files', (r) => r['filename'] === 'PSEXESVC.exe');
    has(e!, 'md5', 'md5', '75b55bb34dac9d02740b9ad6b6820360');
    has(e!, 'sha1', 'sha1', 'a17c21b909c56d93d978014e63fb06926eaea8e7');
    has(e!, 'sha256', 'sha256', '141b2190f51397dbd0dfde0e3904b264c91b6f81febc823ff0c33da980b69944');
  });

  it("reads a Zeek smtp record's envelope and header addresses", () => {
    const [e] = zeek('smtp', (r) => r['mailfrom'] === 'gurpartap@patriots.in');
    has(e!, 'mailfrom', 'email', 'gurpartap@patriots.in');
    has(e!, 'rcptto', 'email', 'raj_deol2002in@yahoo.co.in');
    // The From header (`"Gurpartap Singh" <gurpartap@patriots.in>`) holds the envelope's address: named once.
    assert.equal(observablesOf(e!).filter((o) => o.type === 'email').length, 2);
  });

  it("reads a Zeek ssl SNI and an x509 certificate's names", () => {
    has(zeek('ssl', (r) => r['server_name'] === 'chat.freenode.net')[0]!, 'server_name', 'domain', 'chat.freenode.net');
    has(zeek('x509', (r) => r['id'] === 'F6pDkA4niQwyXPxugf')[0]!, 'san.dns', 'domain', 'chat.au.freenode.com');
  });

  it('reads the peer an sshd line names, from syslog and from the journal', () => {
    const [s] = fixtureEvents('syslog-rfc5424', ['syslog-rfc5424', 'constructed-linux-valid.log'], () => true);
    has(s!, 'src_ip', 'ipv4', '203.0.113.50');
    const j = fixtureEvents(
      'linux-journal',
      ['linux-journal', 'constructed-security-events.jsonl'],
      (r) => typeof r['MESSAGE'] === 'string' && (r['MESSAGE'] as string).includes('203.0.113.50'),
    );
    has(j[0]!, 'src_ip', 'ipv4', '203.0.113.50');
  });

  it("reads a Tailscale flow's addresses from its endpoints", () => {
    const events = fixtureEvents(
      'mesh-vpn-logs',
      ['mesh-vpn-logs', 'network-flow-records-constructed.jsonl'],
      () => true,
      { logType: 'network' },
    );
    has(events[0]!, 'sourceEndpoint.ip', 'ipv4', '100.101.102.103');
    has(events[0]!, 'destinationEndpoint.ip', 'ipv4', '100.64.0.7');
  });

  it('reads OTel semantic-convention attributes and Sysmon fields', () => {
    const request = JSON.parse(
      readFileSync(fixturePath('opentelemetry-log', 'otlp-constructed-export-request.json'), 'utf8'),
    );
    const r = NORMALIZERS.get('opentelemetry-log')!.normalize(request, CTX);
    assert.ok(r.ok);
    const withClient = r.events.find((e) => e.attributes['client.address'] === '198.51.100.23')!;
    has(withClient, 'client.address', 'ipv4', '198.51.100.23');
    const kv = (key: string, value: string) => ({ key, value: { stringValue: value } });
    const built = NORMALIZERS.get('opentelemetry-log')!.normalize(
      {
        resourceLogs: [
          {
            resource: { attributes: [kv('service.name', 'web')] },
            scopeLogs: [
              {
                logRecords: [
                  {
                    timeUnixNano: '1715667990123456789',
                    attributes: [
                      kv('url.full', 'HTTPS://Evil.Example.COM:443/a/../pay?x=1#frag'),
                      kv('server.address', 'cdn.evil.example.com.'),
                      kv(
                        'Hashes',
                        'SHA1=A17C21B909C56D93D978014E63FB06926EAEA8E7,IMPHASH=00000000000000000000000000000000',
                      ),
                    ],
                  },
                ],
              },
            ],
          },
        ],
      },
      CTX,
    );
    assert.ok(built.ok, built.ok ? '' : built.error);
    const e = built.events[0]!;
    has(e, 'url.full', 'url', 'https://evil.example.com/pay?x=1');
    has(e, 'url.full', 'domain', 'evil.example.com');
    has(e, 'server.address', 'domain', 'cdn.evil.example.com');
    has(e, 'Hashes', 'sha1', 'a17c21b909c56d93d978014e63fb06926eaea8e7');
    assert.ok(!observablesOf(e).some((o) => o.type === 'md5'), 'IMPHASH is not a file hash');
  });

  it('names every field of the table once per adapter', () => {
    const seen = new Set(EVENT_FIELDS.map((f) => `${f.adapter} ${f.field}`));
    assert.equal(seen.size, EVENT_FIELDS.length);
  });

  it('reads at most MAX_OBSERVABLES values however many an event holds', () => {
    const [e] = zeek('x509', (r) => r['id'] === 'F6pDkA4niQwyXPxugf');
    const many = { ...e!, entityKeys: Array.from({ length: 200 }, (_, i) => `domain:n${i}.example.org`) };
    assert.equal(observablesOf(many).length, MAX_OBSERVABLES);
  });
});

describe('event values', () => {
  it('writes addresses canonically, an IPv4-mapped IPv6 address as IPv4', () => {
    assert.deepEqual(eventIp('2001:DB8:0:0:0:0:0:1'), { type: 'ipv6', value: '2001:db8::1' });
    assert.deepEqual(eventIp('::ffff:1.2.3.4'), { type: 'ipv4', value: '1.2.3.4' });
    assert.deepEqual(eventIp('[fe80::1%eth0]'), { type: 'ipv6', value: 'fe80::1' });
    assert.deepEqual(eventIp('2001:db8:0:1:0:0:0:1'), { type: 'ipv6', value: '2001:db8:0:1::1' });
    assert.deepEqual(eventIp('64:ff9b::192.0.2.33'), { type: 'ipv6', value: '64:ff9b::c000:221' });
    assert.equal(eventIp('01.2.3.4'), undefined);
    assert.equal(eventIp('example.com'), undefined);
  });

  it('agrees with the WHATWG URL serializer on every IPv6 address', () => {
    const v6 = fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 });
    fc.assert(
      fc.property(v6, (groups) => {
        const text = groups.map((g) => g.toString(16)).join(':');
        const got = eventIp(text)!;
        const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
        if (!mapped) assert.equal(got.value, new URL(`http://[${text}]`).hostname.slice(1, -1));
        else assert.equal(got.type, 'ipv4');
      }),
      { numRuns: 2000 },
    );
  });

  it('lower-cases domains, drops the root dot, writes IDNs as punycode and refuses non-names', () => {
    assert.deepEqual(eventDomain('WWW.Evil.COM.'), { type: 'domain', value: 'www.evil.com' });
    assert.deepEqual(eventDomain('bücher.de'), { type: 'domain', value: 'xn--bcher-kva.de' });
    assert.deepEqual(eventDomain('10.0.0.1'), { type: 'ipv4', value: '10.0.0.1' });
    assert.equal(eventDomain('not a name'), undefined);
    assert.equal(eventDomain('a..b'), undefined);
  });

  it('normalizes URLs and refuses schemes that are not fetched', () => {
    assert.equal(eventUrl('HTTP://A.example:80/x/./y#z')!.url.value, 'http://a.example/x/y');
    assert.equal(eventUrl('javascript:alert(1)'), undefined);
    assert.equal(eventUrl(`http://a.example/${'x'.repeat(3000)}`), undefined);
  });

  it('reads hashes by their length and e-mail from a header', () => {
    assert.deepEqual(eventHash('A5843BD951F148E99B7265E5BD159FB7'), {
      type: 'md5',
      value: 'a5843bd951f148e99b7265e5bd159fb7',
    });
    assert.equal(eventHash('xyz'), undefined);
    assert.deepEqual(eventEmail('"Gurpartap Singh" <Gurpartap@Patriots.IN>'), {
      type: 'email',
      value: 'gurpartap@patriots.in',
    });
    assert.equal(eventEmail('no address'), undefined);
    assert.deepEqual(
      sysmonHashes('MD5=75B55BB34DAC9D02740B9AD6B6820360,SHA256=bad').map((h) => h.type),
      ['md5'],
    );
  });

  it('never throws on any string', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (s) => {
        eventIp(s);
        eventDomain(s);
        eventUrl(s);
        eventEmail(s);
        sysmonHashes(s);
      }),
      { numRuns: 1000 },
    );
  });
});
