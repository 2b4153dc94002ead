import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import {
  csvFields,
  guessIndicatorType,
  MAX_LISTED_REFUSALS,
  readIndicatorList,
} from '../../src/detection/intel/lists.js';
import { fixturePath } from '../helpers/paths.js';

const values = (set: ReturnType<typeof readIndicatorList>) => set.indicators.map((i) => i.id);

describe('readIndicatorList', () => {
  it('reads one value a line of a declared type, skipping blanks and # comments, merging duplicates', () => {
    const text = '# C2 domains\n\nEvil.example\r\nevil.example.\n  other.example  # seen 2024-05\nnot a domain\n';
    const set = readIndicatorList(text, 'domain', { confidence: 60, name: 'abuse list' });
    assert.deepEqual(values(set), ['list:domain:evil.example', 'list:domain:other.example']);
    assert.deepEqual(set.indicators[0], {
      id: 'list:domain:evil.example',
      anyOf: [[{ type: 'domain', value: 'evil.example' }]],
      source: 'Evil.example',
      confidence: 60,
      name: 'abuse list',
    });
    assert.deepEqual(set.unsupported, [
      { id: 'list:line:6', source: 'not a domain', reason: "line 6: 'not a domain' is not a valid domain" },
    ]);
  });

  it('takes addresses and ranges alike in an address list', () => {
    const set = readIndicatorList('10.0.0.1\n10.1.2.3/16\n2001:db8::1\n', 'ipv4');
    assert.deepEqual(values(set), ['list:ipv4:10.0.0.1', 'list:cidr:10.1.0.0/16', 'list:ipv6:2001:db8::1']);
  });

  it('guesses each value of an auto list', () => {
    const table: Array<[string, string]> = [
      ['http://a.example/x', 'url'],
      ['b.example/y', 'url'],
      ['x@a.example', 'email'],
      ['10.0.0.0/8', 'cidr'],
      ['10.0.0.1', 'ipv4'],
      ['2001:db8::1', 'ipv6'],
      ['001dd76872d80801692ff942308c64e6', 'md5'],
      ['77b0c41b7d340b8a3d903f21347bbf06aa766b5b', 'sha1'],
      ['b3c4ae251f8094fa15b510051835c657eaef2a6cea46075d3aec964b14a99f68', 'sha256'],
      ['deadbeef.example', 'domain'],
      ['cafe', 'domain'],
    ];
    for (const [value, type] of table) assert.equal(guessIndicatorType(value), type, value);
    const set = readIndicatorList(table.map(([v]) => v).join('\n'), 'auto');
    assert.equal(set.indicators.length, table.length - 1, "'cafe' is not a domain (one label)");
    assert.equal(set.unsupported[0]!.source, 'cafe');
  });

  it('reads a CSV by its header: the MISP export, its md5 or sha256 column', () => {
    const text = readFileSync(fixturePath('misp', 'valid_fieldnames.csv'), 'utf8');
    const md5 = readIndicatorList(text, 'md5');
    assert.ok(md5.indicators.length >= 2);
    assert.equal(md5.indicators[0]!.id, 'list:md5:644087ccca16d2a728ef7685a4106f09');
    assert.deepEqual(md5.unsupported, []);
    const sha256 = readIndicatorList(text, 'auto', { column: 'SHA256' });
    assert.equal(
      sha256.indicators[0]!.id,
      'list:sha256:385e31c97e3a07bbb81513f0cd0979e64e6b014943902efd002f57b21eadd41e',
    );
    assert.throws(() => readIndicatorList(text, 'md5', { column: 'nope' }), /no column 'nope'/);
    const quoted = readIndicatorList('first_seen,value\n2024-01-01,"a.example"\n"2024, late","b.example"\n', 'domain');
    assert.deepEqual(values(quoted), ['list:domain:a.example', 'list:domain:b.example']);
  });

  it('splits CSV fields with RFC 4180 quotes', () => {
    assert.deepEqual(csvFields('a, "b,c" ,"d""e",'), ['a', 'b,c', 'd"e', '']);
  });

  it('lists the first refusals one by one and counts the rest, and bounds the line count', () => {
    const bad = Array.from({ length: MAX_LISTED_REFUSALS + 5 }, (_, i) => `bad value ${i}`).join('\n');
    const set = readIndicatorList(bad, 'domain');
    assert.equal(set.unsupported.length, MAX_LISTED_REFUSALS + 1);
    assert.equal(set.unsupported.at(-1)!.reason, '5 more lines refused, not listed one by one');
    assert.throws(
      () => readIndicatorList('a.example\nb.example\nc.example', 'domain', { maxLines: 2 }),
      /more than 2 lines/,
    );
  });

  it('never throws, whatever the text', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 300 }),
        fc.constantFrom('auto', 'domain', 'cidr', 'url', 'md5') as fc.Arbitrary<'auto'>,
        (t, type) => {
          const set = readIndicatorList(t, type);
          for (const i of set.indicators) assert.equal(i.anyOf.length, 1);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
