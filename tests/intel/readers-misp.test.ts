import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { readMispEvent, readMispManifest } from '../../src/detection/intel/misp.js';
import { IntelFormatError } from '../../src/detection/intel/normalize.js';
import { fixturePath } from '../helpers/paths.js';

const event = (file: string): unknown => JSON.parse(readFileSync(fixturePath('misp', file), 'utf8'));
const terms = (set: ReturnType<typeof readMispEvent>) =>
  set.indicators.map((i) => i.anyOf.map((alt) => alt.map((t) => `${t.type}:${t.value}`).join('&')).join('|'));

describe('readMispEvent', () => {
  it('reads the feed event: its to_ids hashes become indicators, filename and regkey|value are refused, links skipped', () => {
    const set = readMispEvent(event('57c4445b-c548-4654-af0b-4be3950d210f.json'));
    assert.deepEqual(terms(set), [
      'md5:0749bae92ca336a02c83d126e04ec628',
      'sha1:77b0c41b7d340b8a3d903f21347bbf06aa766b5b',
      'sha256:b3c4ae251f8094fa15b510051835c657eaef2a6cea46075d3aec964b14a99f68',
    ]);
    const md5 = set.indicators[0]!;
    assert.equal(md5.id, '57c4448b-454c-4d17-90d1-4d2f950d210f');
    assert.equal(md5.validFrom, '2016-08-29T00:00:00Z', "the event's date");
    assert.equal(md5.source, 'md5: 0749bae92ca336a02c83d126e04ec628');
    assert.ok(md5.name && md5.name.length > 0);
    assert.ok(md5.labels?.includes('tlp:white'));
    assert.deepEqual(
      set.unsupported.map((u) => [u.id, u.reason.replace(/ \(Vigil matches .*\)$/, '')]),
      [
        ['57c4448a-fb04-457d-87e7-4127950d210f', "MISP attribute type 'filename' is not supported"],
        ['57c54b0f-27a4-458b-8e63-4455950d210f', "MISP attribute type 'regkey|value' is not supported"],
      ],
    );
    assert.match(set.unsupported[0]!.reason, /Vigil matches ip-src, ip-dst/);
    assert.equal(set.unsupported[0]!.source, 'filename: 3Z4wnG9603it23y.exe');
  });

  it('reads a bare event with objects: domains, sha1s and domain-ip addresses, named after Sofacy and its tools', () => {
    const set = readMispEvent(event('existing_event.json'));
    const all = terms(set);
    assert.ok(all.includes('domain:movieultimate.com'));
    assert.ok(all.includes('sha1:68064fc152e23d56e541714af52651cb4ba81aaf'), 'an object attribute');
    assert.ok(all.includes('ipv4:87.236.211.182'));
    assert.equal(all.filter((t) => t.startsWith('domain:')).length, 7 + 12);
    assert.equal(all.filter((t) => t.startsWith('ipv4:')).length, 12);
    assert.equal(all.filter((t) => t.startsWith('sha1:')).length, 37);
    assert.ok(set.unsupported.every((u) => /type 'filename' is not supported/.test(u.reason)));
    assert.equal(set.unsupported.length, 15, 'the file names of the file objects');
    const related = set.indicators[0]!.related!;
    assert.deepEqual(related[0], { type: 'threat-actor', name: 'Sofacy', id: related[0]!.id });
    assert.ok(related.some((r) => r.type === 'tool' && r.name === 'X-Agent'));
    assert.ok(related.some((r) => r.type === 'malware' && r.name === 'CHOPSTICK'));
    assert.ok(related.some((r) => r.type === 'exploit-kit' && r.name === 'Sednit EK'));
    assert.equal(new Set(related.map((r) => `${r.type}:${r.name}`)).size, related.length, 'galaxies and tags merged');
    assert.ok(!set.indicators[0]!.labels?.some((l) => l.startsWith('misp-galaxy:')));
    assert.equal(set.indicators[0]!.validFrom, '2017-12-21T00:00:00Z');
  });

  it('reads objects without uuids and events with nothing for detection', () => {
    const set = readMispEvent(event('event_obj_attr_tag.json'));
    assert.deepEqual(terms(set), ['url:https://www.circl.lu/']);
    assert.match(set.indicators[0]!.id, /^misp:url:https:\/\/www\.circl\.lu#\d+$/);
    assert.equal(set.unsupported.length, 1);
    assert.deepEqual(readMispEvent(event('misp_event.json')), { indicators: [], unsupported: [] });
  });

  it('reads composite types by their matchable part, and tells a malformed value', () => {
    const attr = (type: string, value: string, extra: object = {}) => ({
      type,
      value,
      to_ids: true,
      uuid: `u-${type}`,
      ...extra,
    });
    const set = readMispEvent({
      Event: {
        date: '2024-02-03',
        Tag: [{ name: 'osint:certainty="75"' }],
        Attribute: [
          attr('ip-dst|port', '203.0.113.9|443'),
          attr('ip-src', '198.51.100.0/24'),
          attr('domain|ip', 'Evil.example|2001:db8::5'),
          attr('filename|sha256', `x.exe|${'A'.repeat(64)}`),
          attr('email-src', 'Phish@Evil.example', { first_seen: '2024-01-01T10:00:00Z' }),
          attr('hostname', 'not a host'),
          attr('md5', 'abc', { deleted: true }),
          attr('url', 'http://a.example/', { to_ids: false }),
        ],
      },
    });
    assert.deepEqual(terms(set), [
      'ipv4:203.0.113.9',
      'cidr:198.51.100.0/24',
      'domain:evil.example|ipv6:2001:db8::5',
      `sha256:${'a'.repeat(64)}`,
      'email:phish@evil.example',
    ]);
    assert.equal(set.indicators[0]!.confidence, 75);
    assert.equal(set.indicators[4]!.validFrom, '2024-01-01T10:00:00Z');
    assert.deepEqual(
      set.unsupported.map((u) => u.reason),
      ["'not a host' is not a valid domain (MISP type hostname)"],
    );
  });

  it('refuses what is not an event', () => {
    assert.throws(() => readMispEvent({ response: [] }), IntelFormatError);
    assert.throws(() => readMispEvent(null), /not a MISP event/);
  });

  it('never throws on arbitrary JSON inside an event', () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue(), { maxLength: 5 }), fc.jsonValue(), (attributes, tags) => {
        readMispEvent({
          Event: { Attribute: attributes, Tag: tags, Galaxy: tags, Object: [{ Attribute: attributes }] },
        });
      }),
    );
  });
});

describe('readMispManifest', () => {
  it('lists each event uuid with its timestamp in seconds', () => {
    const manifest = {
      '57c4445b-c548-4654-af0b-4be3950d210f': { info: 'x', timestamp: '1472541011', date: '2016-08-29' },
      '5A3C2FCD-8328-42BB-A95E-4F4402DE0B81': { timestamp: 1513948642 },
    };
    assert.deepEqual(readMispManifest(manifest), [
      { uuid: '57c4445b-c548-4654-af0b-4be3950d210f', timestamp: 1472541011 },
      { uuid: '5a3c2fcd-8328-42bb-a95e-4f4402de0b81', timestamp: 1513948642 },
    ]);
  });

  it('refuses a key that is not a uuid (it names a file to fetch) and a missing timestamp', () => {
    assert.throws(() => readMispManifest({ '../../etc/passwd': { timestamp: 1 } }), /not an event uuid/);
    assert.throws(() => readMispManifest({ '57c4445b-c548-4654-af0b-4be3950d210f': {} }), /no timestamp/);
    assert.throws(() => readMispManifest([]), IntelFormatError);
  });
});
