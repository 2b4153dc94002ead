import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import * as v from 'valibot';
import { NormalizedEventSchema, type NormalizedEvent } from '../../src/events/normalized-event.js';
import { parseRfc5424 } from '../../src/normalizers/syslog/rfc5424.js';
import { syslogRfc5424 } from '../../src/normalizers/syslog-rfc5424.js';
import { fixturePath } from '../helpers/paths.js';

const ctx = { ingestedAt: '2024-05-14T10:00:00Z' };

function lines(file: string): string[] {
  return readFileSync(fixturePath('syslog-rfc5424', file), 'utf8').split('\n').filter((l) => l !== '');
}

function one(record: unknown): NormalizedEvent {
  const result = syslogRfc5424.normalize(record, ctx);
  assert.ok(result.ok, result.ok ? '' : `${result.error} for ${JSON.stringify(record)}`);
  assert.equal(result.events.length, 1);
  const event = result.events[0]!;
  const check = v.safeParse(NormalizedEventSchema, event);
  assert.ok(check.success, JSON.stringify(check.issues?.map((i) => i.message)));
  return event;
}

function refusal(record: unknown): string {
  const result = syslogRfc5424.normalize(record, ctx);
  assert.equal(result.ok, false, `expected a refusal for ${JSON.stringify(record)}`);
  return result.ok ? '' : result.error;
}

const linux = lines('constructed-linux-valid.log');
function linuxLine(fragment: string): string {
  const found = linux.find((l) => l.includes(fragment));
  assert.ok(found, `no constructed line with "${fragment}"`);
  return found;
}

describe('syslogRfc5424', () => {
  it('accepts every line of valid.log and constructed-linux-valid.log', () => {
    for (const line of [...lines('valid.log'), ...linux]) {
      const e = one({ message: line });
      assert.equal(e.source.adapter, 'syslog-rfc5424');
    }
  });

  it('refuses every invalid line with the parser\'s error verbatim', () => {
    for (const line of [...lines('invalid.log'), ...lines('constructed-linux-invalid.log')]) {
      const parsed = parseRfc5424(line);
      assert.equal(parsed.ok, false, line);
      assert.equal(refusal({ message: line }), parsed.ok ? '' : parsed.error);
    }
  });

  it('maps the constructed sshd lines to authentication events with user and source', () => {
    const failed = one({ message: linuxLine('Failed password for root') });
    assert.deepEqual([failed.category, failed.class, failed.activity, failed.outcome, failed.severity], ['identity', 'authentication', 'logon', 'failure', 5]);
    assert.equal(failed.attributes['user'], 'root');
    assert.equal(failed.attributes['src_ip'], '203.0.113.50');
    assert.equal(failed.attributes['src_port'], '52530');
    assert.deepEqual(failed.entityKeys, ['user:root', 'host:bastion-01', 'ip:203.0.113.50', 'service:sshd', 'process:bastion-01/4243']);
    assert.equal(one({ message: linuxLine('Invalid user admin') }).severity, 6);
    const accepted = one({ message: linuxLine('Accepted publickey') });
    assert.deepEqual([accepted.activity, accepted.outcome], ['logon', 'success']);
    const pam = one({ message: linuxLine('pam_unix(sshd:auth)') });
    assert.deepEqual([pam.outcome, pam.attributes['user'], pam.attributes['src_ip']], ['failure', 'root', '203.0.113.50']);
  });

  it('maps the constructed sudo lines, including the refused ones and the CVE-2019-14287 target', () => {
    const ok = one({ message: linuxLine('alice : TTY=pts/0') });
    assert.deepEqual([ok.class, ok.activity, ok.outcome], ['privilege_escalation', 'sudo', 'success']);
    assert.equal(ok.attributes['COMMAND'], '/usr/bin/systemctl restart nginx');
    const wrongPassword = one({ message: linuxLine('3 incorrect password attempts') });
    assert.deepEqual([wrongPassword.outcome, wrongPassword.severity, wrongPassword.attributes['user']], ['failure', 7, 'mallory']);
    const notInSudoers = one({ message: linuxLine('NOT in sudoers') });
    assert.deepEqual([notInSudoers.outcome, notInSudoers.attributes['reason']], ['failure', 'user NOT in sudoers']);
    assert.equal(one({ message: linuxLine('USER=#-1') }).attributes['USER'], '#-1');
  });

  it('maps the constructed ufw and systemd lines', () => {
    const ufw = one({ message: linuxLine('[UFW BLOCK]') });
    assert.deepEqual([ufw.category, ufw.class, ufw.activity, ufw.outcome], ['network', 'firewall', 'block', 'failure']);
    assert.deepEqual(ufw.sourceEndpoint, { ip: '203.0.113.9', port: 51544 });
    assert.deepEqual([ufw.attributes['dst_ip'], ufw.attributes['dst_port'], ufw.attributes['proto']], ['10.0.0.5', '23', 'tcp']);
    const failed = one({ message: linuxLine("Failed with result 'exit-code'") });
    assert.deepEqual([failed.category, failed.class, failed.activity, failed.outcome], ['system', 'service', 'fail', 'failure']);
    assert.deepEqual(failed.service, { name: 'nginx.service' });
  });

  it('keeps header fields under their RFC 5424 names and NILVALUE as null', () => {
    const e = one({ message: linuxLine('Failed password for root'), receivedAt: '2024-05-14T06:23:10Z', peer: '192.0.2.10:514' });
    assert.deepEqual(
      [e.attributes['PRI'], e.attributes['FACILITY'], e.attributes['SEVERITY'], e.attributes['VERSION'], e.attributes['HOSTNAME'],
        e.attributes['APP-NAME'], e.attributes['PROCID'], e.attributes['MSGID'], e.attributes['STRUCTURED-DATA']],
      [38, 4, 6, 1, 'bastion-01', 'sshd', '4243', null, null]);
    assert.equal(e.attributes['TIMESTAMP'], '2024-05-14T08:23:09.550031+02:00');
    assert.equal(e.attributes['MSG'], 'Failed password for root from 203.0.113.50 port 52530 ssh2');
    assert.deepEqual([e.attributes['receivedAt'], e.attributes['peer']], ['2024-05-14T06:23:10Z', '192.0.2.10:514']);
    assert.equal(e.source.instance, 'bastion-01');
  });

  it('turns STRUCTURED-DATA into SD-ID -> params, with repeated params as arrays', () => {
    const e = one({ message: linuxLine('[req@32473') });
    assert.deepEqual(e.attributes['STRUCTURED-DATA'], { 'req@32473': { path: '/a]b', quote: 'say "hi"', bs: 'C:\\temp', odd: 'a\\nb' } });
    const repeated = one({ message: '<13>1 - h app - - [x@1 k="1" k="2" j=""][__proto__@1 a="b"] m' });
    assert.deepEqual(repeated.attributes['STRUCTURED-DATA'], JSON.parse('{"x@1":{"k":["1","2"],"j":""},"__proto__@1":{"a":"b"}}'));
  });

  it('takes the time from TIMESTAMP, else receivedAt, else ingestedAt', () => {
    assert.equal(one({ message: linuxLine('haproxy') }).time, '2024-05-14T15:31:00.500Z');
    const nil = '<13>1 - host app - - - hello';
    assert.equal(one({ message: nil, receivedAt: '2024-05-14T08:00:00.123456+02:00' }).time, '2024-05-14T06:00:00.123456Z');
    const bare = one({ message: nil });
    assert.equal(bare.time, ctx.ingestedAt);
    assert.deepEqual([bare.category, bare.class, bare.activity, bare.outcome, bare.severity], ['system', 'log', 'message', 'unknown', 3]);
  });

  it('maps syslog severity to event severity', () => {
    const severities = [0, 1, 2, 3, 4, 5, 6, 7].map((s) => one({ message: `<${8 + s}>1 - h app - - - plain text` }).severity);
    assert.deepEqual(severities, [10, 9, 8, 6, 4, 3, 1, 0]);
  });

  it('is deterministic per raw record', () => {
    const line = linuxLine('Failed password for root');
    assert.equal(one({ message: line }).id, one({ message: line }).id);
    assert.notEqual(one({ message: line }).id, one({ message: line, peer: 'x' }).id);
  });

  it('refuses malformed envelopes naming the field', () => {
    assert.match(refusal('<13>1 - - - - - -'), /^record: /);
    assert.match(refusal(null), /^record: /);
    assert.match(refusal({ msg: '<13>1 - - - - - -' }), /^message: /);
    assert.match(refusal({ message: '<13>1 - - - - - -', receivedAt: 'yesterday' }), /^receivedAt: /);
    assert.match(refusal({ message: '<13>1 - - - - - -', peer: 7 }), /^peer: /);
  });

  it('never throws on arbitrary JSON or text, and every event it returns passes the schema', () => {
    const valid = (r: ReturnType<typeof syslogRfc5424.normalize>): void => {
      if (r.ok) for (const e of r.events) assert.ok(v.safeParse(NormalizedEventSchema, e).success);
      else assert.ok(r.error.length > 0);
    };
    fc.assert(fc.property(fc.jsonValue(), (record) => valid(syslogRfc5424.normalize(record, ctx))), { numRuns: 300 });
    const header = fc.constantFrom('<38>1 2024-05-14T08:23:01Z bastion-01 sshd 4242 - - ', '<85>1 - h sudo - - - ', '<4>1 - h kernel - - - ', '<13>1 - - - - - ');
    fc.assert(fc.property(header, fc.string(), fc.option(fc.string(), { nil: undefined }), (h, body, peer) => {
      valid(syslogRfc5424.normalize({ message: `${h}${body}`, ...(peer === undefined ? {} : { peer }) }, ctx));
    }), { numRuns: 500 });
  });
});
