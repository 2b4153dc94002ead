import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import * as v from 'valibot';
import { NormalizedEventSchema, type NormalizedEvent } from '../../src/events/normalized-event.js';
import { linuxJournal } from '../../src/normalizers/linux-journal.js';
import { fixturePath } from '../helpers/paths.js';

const ctx = { ingestedAt: '2024-05-14T10:00:00Z' };
const dir = fixturePath('linux-journal');

function entries(file: string): Record<string, unknown>[] {
  return readFileSync(`${dir}/${file}`, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>);
}

const constructed = entries('constructed-security-events.jsonl');

function entry(file: Record<string, unknown>[], message: string): Record<string, unknown> {
  const found = file.find((e) => typeof e['MESSAGE'] === 'string' && (e['MESSAGE'] as string).includes(message));
  assert.ok(found, `no sample entry with MESSAGE containing "${message}"`);
  return found;
}

function one(record: unknown): NormalizedEvent {
  const result = linuxJournal.normalize(record, ctx);
  assert.ok(result.ok, result.ok ? '' : result.error);
  assert.equal(result.events.length, 1);
  const event = result.events[0]!;
  const check = v.safeParse(NormalizedEventSchema, event);
  assert.ok(check.success, JSON.stringify(check.issues?.map((i) => i.message)));
  return event;
}

function refusal(record: unknown): string {
  const result = linuxJournal.normalize(record, ctx);
  assert.equal(result.ok, false);
  return result.ok ? '' : result.error;
}

describe('linuxJournal', () => {
  it('accepts every sample entry that has a timestamp, with schema-valid events', () => {
    let accepted = 0;
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.jsonl'))) {
      for (const record of entries(file)) {
        const hasTime = '__REALTIME_TIMESTAMP' in record || '_SOURCE_REALTIME_TIMESTAMP' in record;
        if (!hasTime) {
          // The export-format doc's first example is a field-encoding fragment with no timestamp at all.
          assert.match(refusal(record), /__REALTIME_TIMESTAMP/);
          continue;
        }
        const event = one(record);
        assert.equal(event.source.adapter, 'linux-journal');
        assert.equal(event.source.instance, typeof record['_HOSTNAME'] === 'string' ? record['_HOSTNAME'] : '-');
        accepted += 1;
      }
    }
    assert.equal(accepted, 31);
  });

  it('maps the constructed sshd failed password to an identity failure with user, source and keys', () => {
    const e = one(entry(constructed, 'Failed password for invalid user admin'));
    assert.deepEqual([e.category, e.class, e.activity, e.outcome, e.severity], ['identity', 'authentication', 'logon', 'failure', 5]);
    assert.deepEqual(e.actor, { user: 'admin', host: 'bastion-01' });
    assert.deepEqual(e.sourceEndpoint, { ip: '203.0.113.50', port: 52514 });
    assert.deepEqual(e.entityKeys, ['user:admin', 'host:bastion-01', 'ip:203.0.113.50', 'service:sshd', 'process:bastion-01/4242', 'service:ssh.service']);
    assert.equal(e.attributes['user'], 'admin');
    assert.equal(e.attributes['src_ip'], '203.0.113.50');
    assert.equal(e.attributes['_SYSTEMD_UNIT'], 'ssh.service');
    assert.equal(e.attributes['SYSLOG_IDENTIFIER'], 'sshd');
    // _SOURCE_REALTIME_TIMESTAMP (…117367) wins over __REALTIME_TIMESTAMP (…117384).
    assert.equal(e.time, '2024-05-14T06:23:03.117367Z');
    assert.equal(e.ingestedAt, ctx.ingestedAt);
  });

  it('recognizes the sshd-session process of OpenSSH 9.8', () => {
    const e = one(entry(constructed, 'Failed password for root from 203.0.113.51'));
    assert.equal(e.attributes['SYSLOG_IDENTIFIER'], 'sshd-session');
    assert.equal(e.outcome, 'failure');
    assert.equal(e.attributes['src_ip'], '203.0.113.51');
  });

  it('maps the sudo "3 incorrect password attempts" entry to a failed escalation', () => {
    const e = one(entry(constructed, '3 incorrect password attempts'));
    assert.deepEqual([e.category, e.class, e.activity, e.outcome, e.severity], ['identity', 'privilege_escalation', 'sudo', 'failure', 7]);
    assert.equal(e.attributes['user'], 'mallory');
    assert.equal(e.attributes['USER'], 'root');
    assert.equal(e.attributes['COMMAND'], '/bin/bash');
    assert.equal(e.attributes['TTY'], 'pts/1');
    assert.ok(e.entityKeys.includes('user:mallory') && e.entityKeys.includes('user:root'));
  });

  it('maps the sudo command entry despite sudo\'s leading padding', () => {
    const e = one(entry(constructed, 'COMMAND=/usr/bin/systemctl restart nginx'));
    assert.deepEqual([e.activity, e.outcome], ['sudo', 'success']);
    assert.equal(e.attributes['COMMAND'], '/usr/bin/systemctl restart nginx');
    assert.equal(e.attributes['PWD'], '/home/alice');
  });

  it('maps the kernel OOM kill and the UFW block', () => {
    const oom = one(entry(constructed, 'Out of memory'));
    assert.deepEqual([oom.category, oom.class, oom.activity, oom.severity], ['system', 'process', 'oom_kill', 6]);
    assert.equal(oom.attributes['pid'], '7812');
    assert.equal(oom.attributes['process'], 'java');
    assert.ok(oom.entityKeys.includes('process:bastion-01/7812') && oom.entityKeys.includes('process:java'));
    // Kernel entries carry no _SOURCE_REALTIME_TIMESTAMP, so the journal's own time is used.
    assert.equal(oom.time, '2024-05-14T06:27:01.483038Z');
    const ufw = one(entry(constructed, '[UFW BLOCK]'));
    assert.deepEqual([ufw.category, ufw.class, ufw.activity, ufw.outcome], ['network', 'firewall', 'block', 'failure']);
    assert.deepEqual(ufw.destinationEndpoint, { ip: '10.0.0.5', port: 23 });
    assert.equal(ufw.attributes['dst_port'], '23');
  });

  it('uses MESSAGE_ID for unit start, unit failure and logind sessions', () => {
    const started = one(constructed.find((e) => e['MESSAGE_ID'] === '39f53479d3a045ac8e11786248231fbf'));
    assert.deepEqual([started.class, started.activity, started.outcome], ['service', 'start', 'success']);
    assert.deepEqual(started.service, { name: 'nginx.service' });
    const failed = one(constructed.find((e) => e['MESSAGE_ID'] === 'be02cf6855d2428ba40df7e9d022f03d'));
    assert.deepEqual([failed.class, failed.activity, failed.outcome, failed.severity], ['service', 'start', 'failure', 5]);
    assert.equal(failed.attributes['result'], 'failed');
    const session = one(constructed.find((e) => e['MESSAGE_ID'] === '8d45620c1a4348dbb17410da57c60c66'));
    assert.deepEqual([session.category, session.activity], ['identity', 'session_open']);
    assert.deepEqual(session.actor, { user: 'alice', host: 'bastion-01' });
    assert.equal(session.attributes['session_id'], '4');
  });

  it('decodes byte-array values: UTF-8 text, or \\xNN escapes when not UTF-8', () => {
    const nginx = one(constructed.find((e) => Array.isArray(e['MESSAGE'])));
    assert.equal(nginx.attributes['MESSAGE'], 'nginx: [emerg] bind() to 0.0.0.0:80 failed (98: Address already in use)\x1b[0m');
    const pulse = one(entries('beats-journalctl-testdata.jsonl')[1]);
    assert.match(pulse.attributes['MESSAGE'] as string, /AT\+BIA=1,1,0,0,0\rAT\+BCS=2$/);
    const latin1 = one({ __REALTIME_TIMESTAMP: '1578529839140003', MESSAGE: [0xbf, 72, 105, 92, 0] });
    assert.equal(latin1.attributes['MESSAGE'], '\\xbfHi\\x5c\\x00');
  });

  it('keeps repeated fields as arrays and too-large fields as null', () => {
    const nm = one(entries('vector-fake-journal-fixture.jsonl').find((e) => Array.isArray(e['SYSLOG_FACILITY'])));
    assert.deepEqual(nm.attributes['SYSLOG_FACILITY'], ['DHCP4', 'DHCP6']);
    const coredump = one(entries('beats-journalctl-testdata.jsonl')[0]);
    assert.equal(coredump.attributes['COREDUMP_PROC_MOUNTINFO'], null);
    assert.equal(typeof coredump.attributes['COREDUMP_PROC_AUXV'], 'string');
    assert.deepEqual([coredump.class, coredump.activity, coredump.outcome], ['process', 'crash', 'failure']);
    const repeated = one({ __REALTIME_TIMESTAMP: '1', MESSAGE: ['first', [104, 105], null] });
    assert.deepEqual(repeated.attributes['MESSAGE'], ['first', 'hi', null]);
  });

  it('files unrecognized lines as log/message with PRIORITY mapped to severity', () => {
    const vector = entries('vector-fake-journal-fixture.jsonl');
    const debug = one(vector.find((e) => e['MESSAGE'] === 'unit message'));
    assert.deepEqual([debug.category, debug.class, debug.activity, debug.outcome, debug.severity], ['system', 'log', 'message', 'unknown', 0]);
    assert.equal(one(vector.find((e) => e['MESSAGE'] === 'Missing timestamp')).severity, 8);
    const userUnit = one(entries('beats-journalctl-testdata.jsonl')[1]);
    assert.equal(userUnit.category, 'application');
    assert.equal(userUnit.severity, 6);
    assert.equal('severity' in one({ __REALTIME_TIMESTAMP: '1', MESSAGE: 'x' }), false);
  });

  it('prefers _SOURCE_REALTIME_TIMESTAMP and is deterministic', () => {
    const record = entries('vector-fake-journal-fixture.jsonl').find((e) => e['MESSAGE'] === 'Different timestamps');
    const a = one(record);
    assert.equal(a.time, '2020-01-09T00:30:39.140005Z');
    assert.equal(one(structuredClone(record)).id, a.id);
    assert.notEqual(one({ ...record, MESSAGE: 'other' }).id, a.id);
  });

  it('does not let recognizer fields overwrite journal fields', () => {
    const e = one({ __REALTIME_TIMESTAMP: '1', SYSLOG_IDENTIFIER: 'sshd', user: 'journal-user',
      MESSAGE: 'Failed password for root from 203.0.113.50 port 22 ssh2' });
    assert.equal(e.attributes['user'], 'journal-user');
    assert.equal(e.attributes['src_ip'], '203.0.113.50');
  });

  it('refuses non-objects and entries without a usable timestamp', () => {
    for (const bad of [null, [], 'MESSAGE=x', 42]) assert.match(refusal(bad), /^record: /);
    assert.match(refusal({ MESSAGE: 'x' }), /^__REALTIME_TIMESTAMP: /);
    assert.match(refusal({ MESSAGE: 'x', __REALTIME_TIMESTAMP: '1.5e6' }), /^__REALTIME_TIMESTAMP: /);
    assert.match(refusal({ __REALTIME_TIMESTAMP: '99999999999999999999' }), /^__REALTIME_TIMESTAMP: /);
    // An unusable _SOURCE_REALTIME_TIMESTAMP falls back to the journal's own time.
    assert.equal(one({ _SOURCE_REALTIME_TIMESTAMP: 'soon', __REALTIME_TIMESTAMP: '1000000' }).time, '1970-01-01T00:00:01Z');
  });

  it('never throws on arbitrary JSON, and every event it returns passes the schema', () => {
    const valid = (r: ReturnType<typeof linuxJournal.normalize>): void => {
      if (r.ok) for (const e of r.events) assert.ok(v.safeParse(NormalizedEventSchema, e).success);
      else assert.ok(r.error.length > 0);
    };
    fc.assert(fc.property(fc.jsonValue(), (record) => valid(linuxJournal.normalize(record, ctx))), { numRuns: 300 });
    const key = fc.constantFrom('__REALTIME_TIMESTAMP', '_SOURCE_REALTIME_TIMESTAMP', 'MESSAGE', 'MESSAGE_ID', 'PRIORITY', '_HOSTNAME',
      'SYSLOG_IDENTIFIER', '_COMM', '_PID', '_SYSTEMD_UNIT', '_SYSTEMD_USER_UNIT', 'UNIT', 'USER_ID', '__proto__', 'constructor');
    const value = fc.oneof(
      fc.string(), fc.constantFrom('1715667781482915', '39f53479d3a045ac8e11786248231fbf', '8d45620c1a4348dbb17410da57c60c66', 'sshd', 'kernel', '3'),
      fc.array(fc.integer({ min: 0, max: 255 })), fc.array(fc.oneof(fc.string(), fc.constant(null))), fc.constant(null), fc.jsonValue(),
      fc.string().map((s) => `Failed password for ${s} from 203.0.113.5 port 22 ssh2`), fc.string({ unit: 'grapheme', maxLength: 400 }).map((s) => `${s.repeat(3)}`),
    );
    fc.assert(fc.property(fc.dictionary(key, value), (record) => valid(linuxJournal.normalize(record, ctx))), { numRuns: 500 });
  });
});
