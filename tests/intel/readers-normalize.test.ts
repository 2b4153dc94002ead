import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  normalizeCidr,
  normalizeDomain,
  normalizeEmail,
  normalizeIp,
  normalizeTerm,
  normalizeUrl,
} from '../../src/detection/intel/normalize.js';
import { INDICATOR_TYPES, type IndicatorType } from '../../src/detection/intel/types.js';

describe('normalizeTerm', () => {
  const table: Array<[IndicatorType, string, string | undefined]> = [
    ['ipv4', ' 10.0.0.1 ', '10.0.0.1'],
    ['ipv4', '010.0.0.1', undefined],
    ['ipv4', '256.0.0.1', undefined],
    ['ipv4', '1.2.3', undefined],
    ['ipv4', '::ffff:192.0.2.1', '192.0.2.1'],
    ['ipv6', '2001:DB8:0:0:0:0:0:1', '2001:db8::1'],
    ['ipv6', '2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'],
    ['ipv6', '0:0:0:0:0:0:0:0', '::'],
    ['ipv6', '2001:0db8::0001', '2001:db8::1'],
    ['ipv6', '2001:db8:1:1:1:1:1:0', '2001:db8:1:1:1:1:1:0'],
    ['ipv6', 'fe80::1%eth0', undefined],
    ['ipv6', '1::2::3', undefined],
    ['ipv6', '10.0.0.1', undefined],
    ['cidr', '10.1.2.3/16', '10.1.0.0/16'],
    ['cidr', '223.167.0.0/15', '223.166.0.0/15'],
    ['cidr', '2001:DB8::1/32', '2001:db8::/32'],
    ['cidr', '10.0.0.1/32', '10.0.0.1/32'],
    ['cidr', '10.0.0.0/33', undefined],
    ['cidr', '10.0.0.0/08', undefined],
    ['cidr', '10.0.0.0', undefined],
    ['domain', 'Hugesoft.ORG.', 'hugesoft.org'],
    ['domain', 'bücher.example', 'xn--bcher-kva.example'],
    ['domain', '_dmarc.example.com', '_dmarc.example.com'],
    ['domain', 'com', undefined],
    ['domain', '-bad.example', undefined],
    ['domain', 'a..b', undefined],
    ['domain', '1.2.3.4', undefined],
    ['domain', 'has space.com', undefined],
    ['url', 'HTTP://Example.COM:80/A/../b?q=1#frag', 'http://example.com/b?q=1'],
    ['url', 'https://example.com:8443', 'https://example.com:8443/'],
    ['url', 'example.com/path', 'http://example.com/path'],
    ['url', 'javascript:alert(1)', undefined],
    ['url', 'http://exa mple.com/', undefined],
    ['md5', '001DD76872D80801692FF942308C64E6', '001dd76872d80801692ff942308c64e6'],
    ['md5', '001dd76872d80801692ff942308c64e', undefined],
    ['sha1', '77b0c41b7d340b8a3d903f21347bbf06aa766b5b', '77b0c41b7d340b8a3d903f21347bbf06aa766b5b'],
    ['sha256', 'g'.repeat(64), undefined],
    ['email', 'Bad.Guy@Evil.EXAMPLE', 'bad.guy@evil.example'],
    ['email', 'Name <a@b.example>', undefined],
    ['email', 'a@b@c.example', undefined],
    ['email', '@example.com', undefined],
  ];
  for (const [type, raw, expected] of table) {
    it(`reads ${type} ${JSON.stringify(raw)} as ${JSON.stringify(expected)}`, () =>
      assert.equal(normalizeTerm(type, raw), expected));
  }

  it('keeps an address family with its value: IPv4-mapped IPv6 is the IPv4 address', () => {
    assert.deepEqual(normalizeIp('::FFFF:10.0.0.1'), { type: 'ipv4', value: '10.0.0.1' });
    assert.deepEqual(normalizeIp('2001:db8::a'), { type: 'ipv6', value: '2001:db8::a' });
    assert.equal(normalizeIp('[2001:db8::a]'), undefined);
  });

  const anyType = fc.constantFrom(...INDICATOR_TYPES);
  it('never throws, and a normalized value normalizes to itself (idempotent)', () => {
    fc.assert(
      fc.property(anyType, fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.domain(), fc.webUrl()), (t, s) => {
        const once = normalizeTerm(t, s);
        if (once !== undefined) assert.equal(normalizeTerm(t, once), once);
      }),
      { numRuns: 3000 },
    );
  });

  it('is idempotent on generated addresses, ranges, domains, URLs and e-mail addresses', () => {
    fc.assert(
      fc.property(fc.ipV4(), fc.ipV6(), fc.integer({ min: 0, max: 128 }), (v4, v6, len) => {
        const a = normalizeIp(v4);
        assert.ok(a && a.type === 'ipv4', v4);
        assert.deepEqual(normalizeIp(a.value), a);
        const b = normalizeIp(v6);
        assert.ok(b, v6);
        assert.deepEqual(normalizeIp(b.value), b);
        const c4 = normalizeCidr(`${v4}/${len % 33}`);
        assert.ok(c4);
        assert.equal(normalizeCidr(c4), c4);
        const c6 = normalizeCidr(`${v6}/${len}`);
        assert.ok(c6, `${v6}/${len}`);
        assert.equal(normalizeCidr(c6), c6);
      }),
    );
    fc.assert(
      fc.property(
        fc.domain(),
        fc.webUrl({ withQueryParameters: true, withFragments: true }),
        fc.emailAddress(),
        (d, u, e) => {
          const nd = normalizeDomain(d);
          if (nd !== undefined) assert.equal(normalizeDomain(nd), nd);
          const nu = normalizeUrl(u);
          if (nu !== undefined) assert.equal(normalizeUrl(nu), nu);
          const ne = normalizeEmail(e);
          if (ne !== undefined) assert.equal(normalizeEmail(ne), ne);
        },
      ),
    );
  });

  it('clears every host bit of a CIDR range', () => {
    fc.assert(
      fc.property(fc.ipV4(), fc.integer({ min: 0, max: 32 }), (v4, len) => {
        const [addr] = normalizeCidr(`${v4}/${len}`)!.split('/');
        const n = addr!.split('.').reduce((acc, o) => acc * 256 + Number(o), 0);
        assert.equal(n % 2 ** (32 - len), 0);
      }),
    );
  });
});
