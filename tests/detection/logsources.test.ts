import { describe, it } from 'node:test';
import type { NormalizedEvent } from '../../src/events/normalized-event.js';
import assert from 'node:assert/strict';
import { eventProgram, fieldAccessor, indexKeysForEvent, mapLogsource, someKeywordText } from '../../src/detection/logsources.js';
import type { Logsource } from '../../src/detection/types.js';
import { compileSigma } from '../../src/detection/compile.js';
import { createRuleSet } from '../../src/detection/engine.js';
import { collector, journal, makeEvent, syslog, zeek } from './make-event.js';

function keysOf(ls: Logsource): string[] {
  const mapped = mapLogsource(ls);
  assert.ok(mapped.ok, mapped.ok ? '' : mapped.error);
  return mapped.value.indexKeys;
}

describe('mapLogsource', () => {
  it('maps every documented logsource to index keys', () => {
    const table: Array<[Logsource, string[]]> = [
      [{ product: 'zeek', service: 'dns' }, ['zeek:dns']],
      [{ product: 'zeek', service: 'smb_files' }, ['zeek:smb_files']],
      [{ product: 'zeek' }, ['zeek']],
      [{ category: 'dns' }, ['zeek:dns']],
      [{ category: 'firewall' }, ['zeek:conn', 'linux:class:firewall']],
      [{ product: 'linux' }, ['linux']],
      [{ product: 'linux', service: 'syslog' }, ['linux']],
      [{ product: 'linux', service: 'auth' }, ['linux:auth']],
      [{ product: 'linux', service: 'sshd' }, ['linux:prog:sshd', 'linux:prog:sshd-session']],
      [{ product: 'linux', service: 'sudo' }, ['linux:prog:sudo']],
      [{ product: 'Linux', category: 'process_creation' }, ['linux:class:process_creation']],
      [{ product: 'linux', category: 'network_connection' }, ['linux:class:network_connection']],
      [{ product: 'linux', category: 'file_event' }, ['linux:class:file_event']],
      [{ product: 'tailscale' }, ['tailscale']],
      [{ product: 'tailscale', service: 'network' }, ['tailscale:network']],
      [{ product: 'tailscale', service: 'audit' }, ['tailscale:configuration']],
      [{ product: 'vigil', service: 'api' }, ['vigil:api']],
      [{ product: 'opentelemetry' }, ['otel']],
      [{ product: 'linux', service: 'auditd' }, ['linux:auditd']],
      [{ category: 'proxy' }, ['zeek:http']],
      [{ category: 'webserver' }, ['zeek:http']],
      [{ product: 'windows' }, ['win']],
      [{ product: 'windows', service: 'security' }, ['win:ch:security']],
      [{ product: 'windows', service: 'sysmon' }, ['win:ch:microsoft-windows-sysmon/operational']],
      [{ product: 'windows', category: 'process_creation' }, ['win:cat:process_creation']],
      [{ product: 'windows', category: 'registry_set' }, ['win:cat:registry_set']],
    ];
    for (const [ls, keys] of table) assert.deepEqual(keysOf(ls), keys, JSON.stringify(ls));
  });

  it('refuses logsources Vigil has no events for', () => {
    for (const ls of [{ product: 'macos', category: 'process_creation' }, { product: 'aws', service: 'cloudtrail' }, { product: 'windows', service: 'no-such-channel' }, { product: 'windows', category: 'file_access' }, { product: 'linux', service: 'sshd', category: 'process_creation' }, { service: 'sshd' }, { category: 'antivirus' }, { product: 'vigil' }, { product: 'zeek', service: 'Not A Log' }]) {
      const mapped = mapLogsource(ls);
      assert.ok(!mapped.ok && mapped.error.startsWith('unmapped logsource {'), JSON.stringify(ls));
    }
  });
});

describe('indexKeysForEvent', () => {
  it('gives each source its keys', () => {
    assert.deepEqual(indexKeysForEvent(zeek('dns', {})), ['zeek', 'zeek:dns']);
    assert.deepEqual(indexKeysForEvent(collector('process_creation', {})), ['linux:class:process_creation']);
    assert.deepEqual(indexKeysForEvent(makeEvent({ adapter: 'mesh-vpn-logs', instance: 'configuration' })), ['tailscale', 'tailscale:configuration']);
    assert.deepEqual(indexKeysForEvent(makeEvent({ adapter: 'vigil', instance: 'api', class: 'api_access' })), ['vigil:api']);
    assert.deepEqual(indexKeysForEvent(makeEvent({ adapter: 'opentelemetry-log' })), ['otel']);
    assert.deepEqual(indexKeysForEvent(makeEvent({ adapter: 'something-else' })), []);
    // A Linux line is the same evidence whichever route brought it: the collector's tailed files and
    // normalized events from another shipper get the journal's keys.
    const line = { MESSAGE: 'Failed password for root from 198.51.100.77 port 22 ssh2', SYSLOG_IDENTIFIER: 'sshd' };
    assert.deepEqual(indexKeysForEvent(makeEvent({ adapter: 'collector', instance: 'web-01', class: 'authentication', attributes: line })), ['linux', 'linux:class:authentication', 'linux:prog:sshd', 'linux:auth']);
    assert.deepEqual(indexKeysForEvent(makeEvent({ adapter: 'my-shipper', class: 'authentication', attributes: line })), ['linux', 'linux:class:authentication', 'linux:prog:sshd', 'linux:auth']);
    assert.ok(indexKeysForEvent(journal('auditd', 'SYSCALL arch=c000003e syscall=59', { fields: { _TRANSPORT: 'audit' } })).includes('linux:auditd'));
    assert.deepEqual(indexKeysForEvent(makeEvent({ adapter: 'opentelemetry-log', attributes: { Channel: 'Microsoft-Windows-Sysmon/Operational', EventID: 13, EventType: 'SetValue' } })),
      ['otel', 'win', 'win:ch:microsoft-windows-sysmon/operational', 'win:cat:registry_set', 'win:cat:registry_event']);
  });

  it('keys Linux lines by program, class and auth.log membership', () => {
    assert.deepEqual(indexKeysForEvent(journal('sshd-session', 'x')), ['linux', 'linux:class:log', 'linux:prog:sshd-session', 'linux:auth']);
    assert.deepEqual(indexKeysForEvent(journal('nginx', 'x')), ['linux', 'linux:class:log', 'linux:prog:nginx']);
    assert.ok(indexKeysForEvent(journal('CRON', 'pam_unix(cron:session): session opened', { fields: { SYSLOG_FACILITY: '10' } })).includes('linux:auth'));
    assert.ok(indexKeysForEvent(syslog('sshd[4242]', 'x', { fields: { FACILITY: 3 } })).includes('linux:prog:sshd'));
    assert.ok(!indexKeysForEvent(syslog('app', 'x', { fields: { FACILITY: 3 } })).includes('linux:auth'));
    assert.ok(indexKeysForEvent(journal('kernel', 'x', { class: 'firewall', category: 'network' })).includes('linux:class:firewall'));
  });

  it('canonicalises program names', () => {
    assert.equal(eventProgram(syslog('/usr/sbin/sshd', 'x')), 'sshd');
    assert.equal(eventProgram(journal('CRON', 'x')), 'cron');
    assert.equal(eventProgram(makeEvent({ adapter: 'linux-journal', attributes: { _COMM: 'useradd' } })), 'useradd');
  });
});

describe('field resolution', () => {
  it('tries the logsource alias, then attributes exactly, then a dotted path into the event', () => {
    const mapped = mapLogsource({ category: 'firewall' });
    assert.ok(mapped.ok);
    const event = zeek('conn', { 'id.orig_h': '10.0.0.1', src_ip: 'attribute value' }, {
      sourceEndpoint: { ip: '10.0.0.1', port: 5000 }, actor: { user: 'alice' }, outcome: 'success',
    });
    assert.equal(fieldAccessor('src_ip', mapped.value.aliases)(event), '10.0.0.1');
    assert.equal(fieldAccessor('src_ip')(event), 'attribute value');
    assert.equal(fieldAccessor('id.orig_h')(event), '10.0.0.1');
    assert.equal(fieldAccessor('actor.user')(event), 'alice');
    assert.equal(fieldAccessor('source.adapter')(event), 'network-monitor');
    assert.equal(fieldAccessor('blocked', mapped.value.aliases)(event), 'false');
    assert.equal(fieldAccessor('constructor')(event), undefined);
  });
});

describe('keyword search text', () => {
  const has = (event: ReturnType<typeof makeEvent>, needle: string): boolean => someKeywordText(event, (s) => s.includes(needle));

  it('searches the message and program of Linux lines, not their other fields', () => {
    assert.ok(has(journal('pkexec', 'hello'), 'pkexec'));
    assert.ok(has(journal('x', ['first', 'second'] as unknown as string), 'second'));
    assert.ok(!has(journal('x', 'hello', { fields: { _CMDLINE: 'secret' } }), 'secret'));
    assert.ok(has(syslog('app', 'message text'), 'message text'));
  });

  it('searches an OTLP string body, else every string attribute', () => {
    assert.ok(has(makeEvent({ adapter: 'opentelemetry-log', attributes: { body: 'body text', other: 'no' } }), 'body text'));
    assert.ok(!has(makeEvent({ adapter: 'opentelemetry-log', attributes: { body: 'body text', other: 'no' } }), 'no'));
    assert.ok(has(makeEvent({ adapter: 'opentelemetry-log', attributes: { body: { k: 1 }, other: 'found' } }), 'found'));
    assert.ok(has(zeek('http', { uri: '/a', tags: ['x', 'tagged'] }), 'tagged'));
  });
});

describe('the logsource table beyond the original sources', () => {
  const fires = (logsource: Record<string, string>, detection: Record<string, unknown>, event: NormalizedEvent): boolean => {
    const compiled = compileSigma({ title: 't', logsource, detection: { ...detection, condition: 'sel' } });
    assert.ok(compiled.ok, compiled.ok ? '' : compiled.error);
    return createRuleSet([compiled.rule]).matchEvents([event]).matches.length > 0;
  };

  it('proxy and webserver rules read Zeek http.log under the W3C names', () => {
    const event = zeek('http', { method: 'POST', host: 'evil.example', uri: '/upload/shell.php?cmd=id', user_agent: 'curl/8.0', status_code: 200 }, { sourceEndpoint: { ip: '10.0.0.9', port: 50000 } });
    assert.ok(fires({ category: 'proxy' }, { sel: { 'cs-method': 'POST', 'c-uri-extension': 'php', 'c-uri-query|contains': 'cmd=', 'c-useragent|startswith': 'curl/', 'cs-host': 'evil.example' } }, event));
    assert.ok(fires({ category: 'webserver' }, { sel: { 'cs-uri-stem': '/upload/shell.php', 'c-ip': '10.0.0.9', 'sc-status': 200 } }, event));
    assert.ok(!fires({ category: 'proxy' }, { sel: { 'cs-method': 'GET' } }, event));
  });

  it('auditd rules read audit records from the journal: type and key=value pairs', () => {
    const event = journal('audit', 'SYSCALL arch=c000003e syscall=59 success=yes exe="/usr/bin/id" comm="id" key="recon"', { fields: { _TRANSPORT: 'audit', _AUDIT_TYPE_NAME: 'SYSCALL' } });
    assert.ok(fires({ product: 'linux', service: 'auditd' }, { sel: { type: 'SYSCALL', 'exe|endswith': '/id', key: 'recon', syscall: 59 } }, event));
    assert.ok(!fires({ product: 'linux', service: 'auditd' }, { sel: { type: 'EXECVE' } }, event));
  });

  it('Security 4688 answers the Sysmon names of process_creation rules', () => {
    const event = makeEvent({ adapter: 'opentelemetry-log', attributes: { Channel: 'Security', EventID: 4688, NewProcessName: 'C:\\Windows\\System32\\whoami.exe', ParentProcessName: 'C:\\Windows\\System32\\cmd.exe', CommandLine: 'whoami /all' } });
    assert.ok(fires({ product: 'windows', category: 'process_creation' }, { sel: { 'Image|endswith': '\\whoami.exe', 'ParentImage|endswith': '\\cmd.exe', 'CommandLine|contains': '/all' } }, event));
  });
});
