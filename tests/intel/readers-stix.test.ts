import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { IntelFormatError } from '../../src/detection/intel/normalize.js';
import { readStixBundle } from '../../src/detection/intel/stix-bundle.js';
import {
  parseStixPattern,
  printStixPattern,
  STIX_PATTERN_LIMITS,
  stixPatternTerms,
} from '../../src/detection/intel/stix-pattern.js';
import type { Indicator } from '../../src/detection/intel/types.js';
import { fixturePath } from '../helpers/paths.js';

const bundle = (file: string): unknown => JSON.parse(readFileSync(fixturePath('stix-2.1', file), 'utf8'));

describe('stixPatternTerms', () => {
  const ok = (p: string) => {
    const r = stixPatternTerms(p);
    assert.ok(r.ok, r.ok ? '' : r.reason);
    return r.anyOf;
  };
  const refused = (p: string) => {
    const r = stixPatternTerms(p);
    assert.equal(r.ok, false, p);
    return r.ok ? '' : r.reason;
  };

  it('turns =, IN, ISSUBSET, OR and AND inside one observation into alternatives of terms', () => {
    assert.deepEqual(ok("[ipv4-addr:value = '223.167.1.1/15']"), [[{ type: 'cidr', value: '223.166.0.0/15' }]]);
    assert.deepEqual(ok("[ipv4-addr:value ISSUBSET '10.9.9.9/8']"), [[{ type: 'cidr', value: '10.0.0.0/8' }]]);
    assert.deepEqual(ok("[domain-name:value IN ('A.example', 'b.example', 'a.example')]"), [
      [{ type: 'domain', value: 'a.example' }],
      [{ type: 'domain', value: 'b.example' }],
    ]);
  });

  it('reads every hash spelling STIX allows', () => {
    const md5 = '001dd76872d80801692ff942308c64e6';
    const sha1 = '77b0c41b7d340b8a3d903f21347bbf06aa766b5b';
    const sha256 = 'ef537f25c895bfa782526529a9b63d97aa631564d5d789c2b765448c8635fb6c';
    for (const p of ['MD5', 'md5', "'MD5'"])
      assert.deepEqual(ok(`[file:hashes.${p} = '${md5}']`), [[{ type: 'md5', value: md5 }]]);
    for (const p of ["'SHA-1'", 'SHA1', 'sha1', '"SHA-1"'])
      assert.deepEqual(ok(`[file:hashes.${p} = '${sha1}']`), [[{ type: 'sha1', value: sha1 }]]);
    for (const p of ["'SHA-256'", 'SHA256', 'SHA-256']) {
      assert.deepEqual(ok(`[file:hashes.${p} = '${sha256.toUpperCase()}']`), [[{ type: 'sha256', value: sha256 }]]);
    }
  });

  it('joins AND terms into one alternative and distributes them over OR', () => {
    const alternatives = ok(
      "[network-traffic:dst_ref.value = '198.51.100.7' AND (email-addr:value = 'A@x.example' OR " +
        "email-message:from_ref.value = 'b@x.example')] OR [ipv6-addr:value = '2001:DB8::1' AND url:value = 'http://X.example']",
    );
    assert.deepEqual(alternatives, [
      [
        { type: 'ipv4', value: '198.51.100.7' },
        { type: 'email', value: 'a@x.example' },
      ],
      [
        { type: 'ipv4', value: '198.51.100.7' },
        { type: 'email', value: 'b@x.example' },
      ],
      [
        { type: 'ipv6', value: '2001:db8::1' },
        { type: 'url', value: 'http://x.example/' },
      ],
    ]);
  });

  it('refuses what it cannot evaluate, saying what', () => {
    assert.match(refused("[file:name MATCHES '^x']"), /operator MATCHES is not supported/);
    assert.match(refused("[file:name LIKE 'x%']"), /operator LIKE/);
    assert.match(refused('[file:size > 10]'), /operator >/);
    assert.match(refused("[domain-name:value != 'a.example']"), /operator !=/);
    assert.match(refused("[domain-name:value NOT IN ('a.example')]"), /NOT is not supported/);
    assert.match(refused("[ipv4-addr:value ISSUPERSET '10.0.0.0/8']"), /ISSUPERSET/);
    assert.match(refused("[ipv4-addr:value = '1.2.3.4'] AND [domain-name:value = 'a.example']"), /joined by AND/);
    assert.match(refused("[ipv4-addr:value = '1.2.3.4'] FOLLOWEDBY [ipv4-addr:value = '1.2.3.5']"), /FOLLOWEDBY/);
    assert.match(refused("[ipv4-addr:value = '1.2.3.4'] WITHIN 60 SECONDS"), /qualifier WITHIN/);
    assert.match(refused("[ipv4-addr:value = '1.2.3.4'] REPEATS 5 TIMES"), /qualifier REPEATS/);
    assert.match(
      refused("[ipv4-addr:value = '1.2.3.4'] START t'2016-01-01T00:00:00Z' STOP t'2017-01-01T00:00:00Z'"),
      /qualifier START/,
    );
    assert.match(
      refused("[x509-certificate:issuer = 'CN=WEBMAIL']"),
      /object path x509-certificate:issuer is not supported/,
    );
    assert.match(refused("[ipv4-addr:value = 'hugesoft.org']"), /not a valid ipv4-addr/);
    assert.match(refused("[ipv4-addr:value = '2001:db8::1']"), /not a valid ipv4-addr/);
    assert.match(refused("[domain-name:value ISSUBSET 'a.example']"), /addresses only/);
    assert.match(refused('[domain-name:value = 1]'), /int literal/);
    assert.match(refused("[ipv4-addr:value = '1.2.3.4'"), /syntax error at offset \d+: expected '\]'/);
    assert.match(refused('x'.repeat(STIX_PATTERN_LIMITS.maxLength + 1)), /longer than/);
    assert.match(refused(`${'('.repeat(40)}[a:b = 'c']${')'.repeat(40)}`), /nested deeper/);
    const many = Array.from({ length: 1001 }, (_, i) => `domain-name:value = 'd${i}.example'`).join(' OR ');
    assert.match(refused(`[${many}]`), /more than 1000 comparisons/);
    const wide = (n: number) =>
      `(${Array.from({ length: n }, (_, i) => `url:value = 'http://u${i}.example'`).join(' OR ')})`;
    assert.match(refused(`[${wide(40)} AND ${wide(40)}]`), /more than 1000 alternatives/);
  });

  // A generator of patterns in the supported subset, as syntax trees printed to text.
  const kinds = [
    ['ipv4-addr:value', fc.ipV4()],
    ['ipv6-addr:value', fc.ipV6()],
    ['ipv4-addr:value', fc.tuple(fc.ipV4(), fc.integer({ min: 0, max: 32 })).map(([v, l]) => `${v}/${l}`)],
    ['domain-name:value', fc.domain()],
    ["file:hashes.'MD5'", fc.stringMatching(/^[0-9a-f]{32}$/)],
    ['email-addr:value', fc.emailAddress()],
  ] as const;
  const kind = fc.constantFrom(...kinds);
  const value = kind.chain(([path, arb]) => arb.map((v) => [path, v] as const));
  const set = kind.chain(([path, arb]) =>
    fc.array(arb, { minLength: 1, maxLength: 3 }).map((vs) => [path, vs] as const),
  );
  const quote = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  const { comparison } = fc.letrec((tie) => ({
    comparison: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      value.map(([path, v]) => `${path} = ${quote(v)}`),
      fc
        .array(value, { minLength: 1, maxLength: 3 })
        .map((vs) => `${vs[0]![0]} IN (${vs.map(([, v]) => quote(v)).join(', ')})`),
      fc
        .tuple(tie('comparison'), fc.constantFrom('AND', 'OR', 'and', 'or'), tie('comparison'))
        .map(([a, op, b]) => `(${a}) ${op} ${b}`),
    ) as fc.Arbitrary<string>,
  }));
  const supported = fc
    .array(comparison, { minLength: 1, maxLength: 3 })
    .map((cs) => cs.map((c) => `[${c}]`).join(' OR '));

  it('prints a parsed pattern so that it parses to the same tree and the same terms (print, reparse)', () => {
    fc.assert(
      fc.property(supported, (text) => {
        const parsed = parseStixPattern(text);
        assert.ok(parsed.ok, parsed.ok ? '' : `${parsed.reason}: ${text}`);
        const printed = printStixPattern(parsed.pattern);
        const again = parseStixPattern(printed);
        assert.ok(again.ok, printed);
        assert.deepEqual(again.pattern, parsed.pattern);
        assert.equal(printStixPattern(again.pattern), printed);
        const before = stixPatternTerms(text);
        const after = stixPatternTerms(printed);
        assert.deepEqual(after, before);
        if (!before.ok) assert.match(before.reason, /alternatives|comparisons|is not a valid/);
      }),
      { numRuns: 500 },
    );
  });

  it('never throws, on arbitrary text or on pattern-like noise', () => {
    const noise = fc
      .array(
        fc.constantFrom(
          '[',
          ']',
          '(',
          ')',
          "'",
          '"',
          ':',
          '.',
          ' AND ',
          ' OR ',
          ' IN ',
          '=',
          'a',
          '-1',
          'b',
          'x\\',
          ' WITHIN ',
          '*',
          "t'",
        ),
        { maxLength: 40 },
      )
      .map((parts) => parts.join(''));
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          noise,
          supported.map((s) => s.slice(0, Math.max(1, s.length - 3))),
        ),
        (text) => {
          const parsed = parseStixPattern(text);
          if (parsed.ok) assert.equal(parseStixPattern(printStixPattern(parsed.pattern)).ok, true, text);
          stixPatternTerms(text);
        },
      ),
      { numRuns: 5000 },
    );
  });
});

describe('readStixBundle', () => {
  const byValue = (indicators: readonly Indicator[]) =>
    new Map(
      indicators.map((i) => [i.anyOf.map((alt) => alt.map((t) => `${t.type}:${t.value}`).join('&')).join('|'), i]),
    );

  it('reads the APT1 report: 10 indicators (4 CIDR /15, 3 domains, 3 md5) and 2 x509 ones refused', () => {
    const set = readStixBundle(bundle('apt1.json'));
    assert.equal(set.indicators.length, 10);
    const counts = new Map<string, number>();
    for (const i of set.indicators)
      for (const alt of i.anyOf) for (const t of alt) counts.set(t.type, (counts.get(t.type) ?? 0) + 1);
    assert.deepEqual(Object.fromEntries(counts), { cidr: 4, domain: 3, md5: 3 });
    const values = byValue(set.indicators);
    for (const v of ['cidr:223.166.0.0/15', 'cidr:58.246.0.0/15', 'cidr:112.64.0.0/15', 'cidr:139.226.0.0/15']) {
      assert.ok(values.has(v), v);
    }
    assert.ok(values.has('domain:hugesoft.org') && values.has('md5:001dd76872d80801692ff942308c64e6'));
    assert.equal(set.unsupported.length, 2);
    for (const u of set.unsupported) {
      assert.match(u.id, /^indicator--b3b/);
      assert.match(u.source, /^\[x509-certificate:issuer = /);
      assert.match(u.reason, /object path x509-certificate:issuer is not supported/);
    }
  });

  it('keeps validity, name and labels, and names the threat actor, intrusion set and malware behind each', () => {
    const set = readStixBundle(bundle('apt1.json'));
    const values = byValue(set.indicators);
    const domain = values.get('domain:hugesoft.org')!;
    assert.match(domain.id, /^indicator--3f3ff9f1-bb4e-4392-/);
    assert.equal(domain.name, 'FQDN hugesoft.org');
    assert.equal(domain.validFrom, '2015-05-15T09:12:16.432678Z');
    assert.deepEqual(domain.labels, ['malicious-activity']);
    assert.equal(domain.source, "[domain-name:value = 'hugesoft.org']");
    assert.deepEqual(
      domain.related?.map((r) => `${r.type}:${r.name}`),
      ['threat-actor:Ugly Gorilla', 'intrusion-set:APT1'],
    );
    const range = values.get('cidr:223.166.0.0/15')!;
    assert.deepEqual(
      range.related?.map((r) => `${r.type}:${r.name}`),
      ['malware:HUC Packet Transmit Tool (HTRAN)'],
    );
    assert.match(range.related![0]!.id!, /^malware--33159b98/);
    const hash = values.get('md5:001dd76872d80801692ff942308c64e6')!;
    assert.equal(hash.related, undefined, 'no relationship points from the hash indicators');
  });

  it('reads the other sample bundles', () => {
    const c2 = readStixBundle(bundle('indicator-for-c2-ip-address.json'));
    assert.deepEqual(
      c2.indicators.map((i) => i.anyOf),
      [[[{ type: 'ipv4', value: '10.0.0.0' }]]],
    );
    assert.equal(c2.indicators[0]!.name, 'IP Address for known C2 channel');

    const campaign = readStixBundle(bundle('indicator-to-campaign-relationship.json'));
    assert.deepEqual(campaign.indicators[0]!.anyOf, [[{ type: 'ipv4', value: '10.0.0.0' }]]);
    assert.deepEqual(
      campaign.indicators[0]!.related?.map((r) => `${r.type}:${r.name}`),
      ['campaign:Operation Omega'],
    );
    assert.match(campaign.indicators[0]!.related![0]!.id!, /^campaign--b549a58c-/);

    const coa = readStixBundle(bundle('indicators-for-C2-with-COA.json'));
    assert.equal(coa.indicators.length, 2);
    assert.deepEqual(
      coa.indicators.map((i) => [i.anyOf[0]![0]!.type, i.related?.map((r) => r.name)]),
      [
        ['ipv4', ['Poison Ivy']],
        ['sha256', ['Poison Ivy']],
      ],
    );

    const infra = readStixBundle(bundle('infrastructure.json'));
    assert.deepEqual(infra, { indicators: [], unsupported: [] });

    const email = readStixBundle(bundle('malicious-email-indicator-with-attachment.json'));
    assert.equal(email.indicators.length, 0);
    assert.deepEqual(
      email.unsupported.map((u) => u.reason),
      [
        'the operator MATCHES is not supported (email-message:subject); Vigil evaluates =, IN and ISSUBSET',
        'the operator MATCHES is not supported (email-message:body_multipart[*].body_raw_ref.name); Vigil evaluates =, IN and ISSUBSET',
      ],
    );
  });

  it('refuses what is not a bundle, clearly', () => {
    assert.throws(
      () => readStixBundle(bundle('interop-objectmarking-test.json')),
      (e: unknown) => e instanceof IntelFormatError && /a single 'campaign' object/.test(e.message),
    );
    assert.throws(() => readStixBundle('text'), IntelFormatError);
    assert.throws(() => readStixBundle({ type: 'bundle', objects: {} }), /'objects' is not an array/);
    assert.throws(() => readStixBundle({ type: 'bundle', objects: [{}, {}, {}] }, { maxObjects: 2 }), /more than 2/);
  });

  it('reads a TAXII envelope and a bare array, and refuses other pattern types and bad validity', () => {
    const objects = [
      {
        type: 'indicator',
        id: 'indicator--1',
        pattern_type: 'stix',
        pattern: "[url:value = 'HTTP://A.example/x']",
        valid_until: '2030-01-01T00:00:00Z',
        revoked: true,
        confidence: 85,
      },
      { type: 'indicator', id: 'indicator--2', pattern_type: 'sigma', pattern: 'title: x' },
      { type: 'indicator', id: 'indicator--3', pattern_type: 'yara', pattern: 'rule x {}' },
      { type: 'indicator', id: 'indicator--4', pattern: "[domain-name:value = 'a.example']", valid_from: 'yesterday' },
      { type: 'indicator', id: 'indicator--5' },
    ];
    const envelope = readStixBundle({ more: true, next: '2', objects });
    assert.deepEqual(envelope, readStixBundle(objects));
    assert.deepEqual(envelope.indicators, [
      {
        id: 'indicator--1',
        anyOf: [[{ type: 'url', value: 'http://a.example/x' }]],
        source: "[url:value = 'HTTP://A.example/x']",
        validUntil: '2030-01-01T00:00:00Z',
        revoked: true,
        confidence: 85,
      },
    ]);
    assert.deepEqual(
      envelope.unsupported.map((u) => [u.id, u.reason]),
      [
        ['indicator--2', "pattern_type 'sigma' is not supported: Vigil evaluates STIX patterns"],
        ['indicator--3', "pattern_type 'yara' is not supported: Vigil evaluates STIX patterns"],
        ['indicator--4', 'valid_from is not a timestamp'],
        ['indicator--5', "the indicator has no 'pattern' string"],
      ],
    );
  });
});
