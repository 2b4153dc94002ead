import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import fc from 'fast-check';
import * as v from 'valibot';
import { NormalizedEventSchema } from '../../src/events/normalized-event.js';
import type { NormalizedEvent } from '../../src/events/normalized-event.js';
import { NETWORK_MONITOR_LOG_TYPES, networkMonitor } from '../../src/normalizers/network-monitor.js';
import { CONN_STATE_OUTCOMES, connOutcome } from '../../src/normalizers/network-monitor/conn.js';
import { fixturePath } from '../helpers/paths.js';

type Rec = Record<string, unknown>;
interface Sample { readonly dir: string; readonly logType: string; readonly record: Rec }

const CTX = { ingestedAt: '2024-05-01T12:00:00Z' } as const;
const SAMPLE_DIRS = ['zeek-docs', 'wrccdc-json-streaming'];

function loadSamples(): Sample[] {
  const out: Sample[] = [];
  for (const dir of SAMPLE_DIRS) {
    const folder = fixturePath('network-monitor', dir);
    for (const file of readdirSync(folder).filter((f) => f.endsWith('.jsonl')).sort()) {
      const lines = readFileSync(`${folder}/${file}`, 'utf8').split('\n').filter((l) => l.trim() !== '');
      for (const line of lines) out.push({ dir, logType: file.slice(0, -'.jsonl'.length), record: JSON.parse(line) as Rec });
    }
  }
  return out;
}

const SAMPLES = loadSamples();

function sample(dir: string, logType: string, pick: (r: Rec) => boolean = () => true): Rec {
  const found = SAMPLES.find((s) => s.dir === dir && s.logType === logType && pick(s.record));
  assert.ok(found, `no ${dir}/${logType} sample matches`);
  return found.record;
}

function normalizeOne(record: unknown, logType: string | undefined): NormalizedEvent {
  const result = networkMonitor.normalize(record, { ...CTX, logType });
  assert.ok(result.ok, result.ok ? '' : result.error);
  assert.equal(result.events.length, 1);
  return result.events[0]!;
}

function refusal(record: unknown, logType?: string): string {
  const result = networkMonitor.normalize(record, { ...CTX, logType });
  assert.equal(result.ok, false, 'expected the record to be refused');
  return result.ok ? '' : result.error;
}

function assertValid(event: NormalizedEvent): void {
  const parsed = v.safeParse(NormalizedEventSchema, event);
  assert.ok(parsed.success, JSON.stringify(parsed.issues?.[0]?.message));
}

describe('networkMonitor on the Zeek samples', () => {
  it('accepts every record of every sample file with the file name as logType, as valid events', () => {
    assert.ok(SAMPLES.length >= 196, `only ${SAMPLES.length} sample records found`);
    for (const { logType, record } of SAMPLES) {
      const event = normalizeOne(record, logType);
      assertValid(event);
      assert.equal(event.source.adapter, 'network-monitor');
      assert.equal(event.source.instance, logType);
      assert.deepEqual(event.attributes, record, 'attributes keep every Zeek field as sent');
      assert.equal(event.ingestedAt, CTX.ingestedAt);
    }
  });

  it('uses the specific mapping of each mapped log and zeek_<log> for the rest', () => {
    const classes: Record<string, string> = {
      conn: 'network_connection', dns: 'dns_query', http: 'http_request', ssl: 'tls_session', x509: 'x509_certificate',
      files: 'file_transfer', notice: 'zeek_notice', weird: 'zeek_weird', ssh: 'ssh_session', dhcp: 'dhcp_lease',
      smtp: 'smtp_transaction', ftp: 'ftp_command', kerberos: 'kerberos_request', rdp: 'rdp_session',
      ntlm: 'ntlm_authentication', smb_files: 'smb_file_access', smb_mapping: 'smb_share_mapping',
      dce_rpc: 'dce_rpc_call', software: 'software_inventory', known_hosts: 'host_inventory',
      known_services: 'service_inventory', known_certs: 'certificate_inventory', tunnel: 'network_tunnel',
    };
    assert.deepEqual([...NETWORK_MONITOR_LOG_TYPES].sort(), Object.keys(classes).sort());
    for (const { logType, record } of SAMPLES) {
      assert.equal(normalizeOne(record, logType).class, classes[logType] ?? `zeek_${logType}`, logType);
    }
    assert.equal(networkMonitor.anyLogType, true);
    assert.equal(networkMonitor.name, 'network-monitor');
  });
});

describe('networkMonitor conn', () => {
  it('maps an SF connection to a successful network_connection with endpoints and ports', () => {
    const event = normalizeOne(sample('zeek-docs', 'conn', (r) => r['uid'] === 'C8blOJ21azairPrWf8'), 'conn');
    assert.equal(event.category, 'network');
    assert.equal(event.class, 'network_connection');
    assert.equal(event.activity, 'traffic');
    assert.equal(event.outcome, 'success');
    assert.deepEqual(event.sourceEndpoint, { ip: '192.168.4.142', port: 50540 });
    assert.deepEqual(event.destinationEndpoint, { ip: '184.168.176.1', port: 443 });
    assert.deepEqual(event.service, { protocol: 'tcp', port: 443 });
    assert.deepEqual(event.correlation, { uid: 'C8blOJ21azairPrWf8' });
    assert.deepEqual(event.entityKeys, ['ip:192.168.4.142', 'ip:184.168.176.1', 'port:tcp/443']);
    assert.equal(event.attributes['id.orig_h'], '192.168.4.142');
    assert.equal(event.time, '2020-12-10T02:44:24.274569Z');
  });

  it('names the service and keys each analyzer Zeek attached', () => {
    const event = normalizeOne(sample('zeek-docs', 'conn', (r) => r['service'] === 'ssl,smtp'), 'conn');
    assert.deepEqual(event.service, { name: 'ssl,smtp', protocol: 'tcp', port: 587 });
    assert.ok(event.entityKeys.includes('service:ssl') && event.entityKeys.includes('service:smtp'));
    assert.equal(event.correlation?.['communityId'], '1:wM+UdwdNy9VK/LEhFBTcQCtAqo8=');
  });

  it('maps an S0 (attempt, no reply) to failure', () => {
    const event = normalizeOne(sample('zeek-docs', 'conn', (r) => r['conn_state'] === 'S0'), 'conn');
    assert.equal(event.outcome, 'failure');
  });

  it('follows the documented conn_state table, deciding OTH by history', () => {
    const expected: Record<string, string> = {
      S0: 'failure', S1: 'success', SF: 'success', REJ: 'failure', S2: 'success', S3: 'success', RSTO: 'success',
      RSTR: 'success', RSTOS0: 'failure', RSTRH: 'failure', SH: 'failure', SHR: 'unknown', OTH: 'unknown',
    };
    assert.deepEqual({ ...CONN_STATE_OUTCOMES }, expected);
    for (const [state, outcome] of Object.entries(expected)) assert.equal(connOutcome(state, undefined), outcome, state);
    assert.equal(connOutcome('OTH', 'DdAR'), 'success');
    assert.equal(connOutcome('OTH', 'DR'), 'unknown');
    assert.equal(connOutcome('toString', 'Dd'), 'unknown');
    assert.equal(connOutcome(undefined, 'ShADadfF'), 'unknown');
    const oth = normalizeOne(sample('zeek-docs', 'conn', (r) => r['history'] === 'DdAR'), 'conn');
    assert.equal(oth.outcome, 'success');
  });
});

describe('networkMonitor time', () => {
  const conn = { uid: 'CT1', 'id.orig_h': '10.0.0.1', 'id.orig_p': 1, 'id.resp_h': '10.0.0.2', 'id.resp_p': 2 };

  it('keeps the microseconds of an epoch-seconds float', () => {
    const event = normalizeOne(sample('zeek-docs', 'conn', (r) => r['uid'] === 'CMdzit1AMNsmfAIiQc'), 'conn');
    assert.equal(event.time, '2020-06-05T14:39:59.305988Z');
  });

  it('keeps an ISO 8601 ts to the microsecond', () => {
    const event = normalizeOne(sample('zeek-docs', 'conn', (r) => r['ts'] === '2020-10-02T04:14:14.443346Z'), 'conn');
    assert.equal(event.time, '2020-10-02T04:14:14.443346Z');
  });

  it('reads an integer above 1e11 as epoch milliseconds and a smaller one as seconds', () => {
    assert.equal(normalizeOne({ ...conn, ts: 1591367999305 }, 'conn').time, '2020-06-05T14:39:59.305Z');
    assert.equal(normalizeOne({ ...conn, ts: 1591367999 }, 'conn').time, '2020-06-05T14:39:59Z');
  });

  it('refuses a missing or unreadable ts, naming the field', () => {
    assert.match(refusal({ ...conn }, 'conn'), /^ts: /);
    assert.match(refusal({ ...conn, ts: null }, 'conn'), /^ts: /);
    for (const ts of ['yesterday', '2020-06-05 14:39:59', '1591367999.3', true, [], {}, 1e300, 1591367999305.5]) {
      assert.equal(refusal({ ...conn, ts }, 'conn'), 'ts: expected epoch seconds, ISO 8601 string or epoch milliseconds');
    }
  });
});

describe('networkMonitor dns', () => {
  it('maps NXDOMAIN to failure with the domain key', () => {
    const event = normalizeOne(sample('wrccdc-json-streaming', 'dns', (r) => r['rcode_name'] === 'NXDOMAIN'), 'dns');
    assert.equal(event.class, 'dns_query');
    assert.equal(event.outcome, 'failure');
    assert.ok(event.entityKeys.includes('domain:videosearch.ubuntu.com'));
  });

  it('maps NOERROR to success, keeps the answers and keys names and addresses', () => {
    const record = sample('wrccdc-json-streaming', 'dns', (r) => r['qtype_name'] === 'AAAA');
    const event = normalizeOne(record, 'dns');
    assert.equal(event.outcome, 'success');
    assert.deepEqual(event.attributes['answers'], ['ise.wrccdc.cpp.edu', '2620:df:8000:1601:0:1:3:16']);
    assert.deepEqual(event.entityKeys.slice(2), ['domain:ise.wrccdc.org', 'domain:ise.wrccdc.cpp.edu', 'ip:2620:df:8000:1601:0:1:3:16']);
    assert.deepEqual(event.service, { name: 'dns', protocol: 'udp', port: 53 });
  });

  it('maps an unanswered query (no rcode) to unknown', () => {
    const event = normalizeOne(sample('wrccdc-json-streaming', 'dns', (r) => r['rcode'] === undefined), 'dns');
    assert.equal(event.outcome, 'unknown');
  });

  it('lower-cases the query and drops the trailing dot in the domain key', () => {
    const event = normalizeOne({ ts: 1, query: 'WWW.Example.COM.', rcode_name: 'SERVFAIL' }, 'dns');
    assert.deepEqual(event.entityKeys, ['domain:www.example.com']);
    assert.equal(event.outcome, 'failure');
    assert.equal(event.attributes['query'], 'WWW.Example.COM.');
  });
});

describe('networkMonitor identity logs', () => {
  it('maps an ssh authentication failure to a failed identity ssh_session', () => {
    const event = normalizeOne(sample('wrccdc-json-streaming', 'ssh', (r) => r['auth_success'] === false), 'ssh');
    assert.equal(event.category, 'identity');
    assert.equal(event.class, 'ssh_session');
    assert.equal(event.activity, 'authenticate');
    assert.equal(event.outcome, 'failure');
    assert.equal(event.severity, 3);
  });

  it('maps ssh success to success and an undetermined session to unknown', () => {
    assert.equal(normalizeOne(sample('wrccdc-json-streaming', 'ssh', (r) => r['auth_success'] === true), 'ssh').outcome, 'success');
    const none = normalizeOne(sample('wrccdc-json-streaming', 'ssh', (r) => r['auth_attempts'] === 0), 'ssh');
    assert.equal(none.outcome, 'unknown');
    assert.equal(none.activity, 'connect');
  });

  it('keys the Kerberos client, NTLM user and RDP cookie as users', () => {
    const krb = normalizeOne(sample('zeek-docs', 'kerberos'), 'kerberos');
    assert.deepEqual(krb.actor, { user: 'RonHD', domain: 'CONTOSO.LOCAL' });
    assert.ok(krb.entityKeys.includes('user:RonHD'));
    assert.equal(krb.activity, 'tgs_request');
    assert.equal(krb.outcome, 'success');
    const ntlm = normalizeOne(sample('zeek-docs', 'ntlm', (r) => r['username'] === 'user'), 'ntlm');
    assert.deepEqual(ntlm.actor, { user: 'user', host: 'DESKTOP-2AEFM7G', domain: 'DESKTOP-2AEFM7G' });
    assert.ok(ntlm.entityKeys.includes('user:user') && ntlm.entityKeys.includes('host:desktop-2aefm7g'));
    const rdp = normalizeOne(sample('zeek-docs', 'rdp'), 'rdp');
    assert.ok(rdp.entityKeys.includes('user:test'));
  });
});

describe('networkMonitor findings', () => {
  it('maps a notice to a finding ranked by its note', () => {
    const attack = normalizeOne(sample('zeek-docs', 'notice', (r) => r['note'] === 'ATTACK::Lateral_Movement'), 'notice');
    assert.equal(attack.category, 'finding');
    assert.equal(attack.class, 'zeek_notice');
    assert.equal(attack.severity, 7);
    const cert = normalizeOne(sample('wrccdc-json-streaming', 'notice'), 'notice');
    assert.equal(cert.severity, 4);
    assert.ok(cert.entityKeys.includes('file:FGP2jt4dhD3bYZ923k'));
  });

  it('ranks Scan:: notices at 6 and takes endpoints from src/dst/p when id.* is absent', () => {
    const event = normalizeOne({ ts: 1, note: 'Scan::Port_Scan', src: '10.1.1.1', dst: '10.2.2.2', p: 22, msg: 'scan' }, 'notice');
    assert.equal(event.severity, 6);
    assert.deepEqual(event.sourceEndpoint, { ip: '10.1.1.1' });
    assert.deepEqual(event.destinationEndpoint, { ip: '10.2.2.2', port: 22 });
    assert.deepEqual(event.entityKeys, ['ip:10.1.1.1', 'ip:10.2.2.2']);
  });

  it('maps a weird to a lower-ranked finding', () => {
    const event = normalizeOne(sample('wrccdc-json-streaming', 'weird'), 'weird');
    assert.equal(event.category, 'finding');
    assert.equal(event.class, 'zeek_weird');
    assert.ok(event.severity !== undefined && event.severity < 4);
  });
});

describe('networkMonitor certificates, files and inventory', () => {
  it('gives ssl and x509 the same cert: key for one certificate', () => {
    const ssl = normalizeOne(sample('wrccdc-json-streaming', 'ssl', (r) => Array.isArray(r['cert_chain_fps'])), 'ssl');
    const x509 = normalizeOne(sample('wrccdc-json-streaming', 'x509'), 'x509');
    const key = 'cert:b2dafbcdbc75210672f137f27ce882ccb799887631655d4f11191d5a678e44fe';
    assert.ok(ssl.entityKeys.includes(key) && x509.entityKeys.includes(key));
    assert.ok(x509.entityKeys.includes('cert:CC57FE54011E'));
    const old = normalizeOne(sample('zeek-docs', 'x509'), 'x509');
    assert.ok(old.entityKeys.includes('cert:F6pDkA4niQwyXPxugf'));
    const named = normalizeOne(sample('zeek-docs', 'ssl', (r) => r['server_name'] === 'chat.freenode.net'), 'ssl');
    assert.ok(named.entityKeys.includes('domain:chat.freenode.net') && named.entityKeys.includes('cert:F6pDkA4niQwyXPxugf'));
  });

  it('links http and files through the file id', () => {
    const http = normalizeOne(sample('zeek-docs', 'http', (r) => r['uid'] === 'CzoFRWTQ6YIzfFXHk'), 'http');
    const files = normalizeOne(sample('zeek-docs', 'files', (r) => r['fuid'] === 'FBbQxG1GXLXgmWhbk9'), 'files');
    assert.ok(http.entityKeys.includes('file:FBbQxG1GXLXgmWhbk9') && files.entityKeys.includes('file:FBbQxG1GXLXgmWhbk9'));
    assert.ok(http.entityKeys.includes('domain:download.microsoft.com'));
    assert.equal(files.correlation?.['uid'], http.correlation?.['uid']);
  });

  it('puts known_hosts, known_services and software in discovery with host and service keys', () => {
    const host = normalizeOne(sample('zeek-docs', 'known_hosts'), 'known_hosts');
    assert.equal(host.category, 'discovery');
    assert.deepEqual(host.entityKeys, ['ip:192.168.4.25', 'host:192.168.4.25']);
    const svc = normalizeOne(sample('zeek-docs', 'known_services'), 'known_services');
    assert.deepEqual(svc.service, { name: 'dns', protocol: 'udp', port: 53 });
    assert.deepEqual(svc.entityKeys, ['ip:192.168.4.1', 'service:dns', 'port:udp/53']);
    assert.equal(normalizeOne(sample('zeek-docs', 'software'), 'software').category, 'discovery');
  });

  it('keys the DHCP host name and client FQDN', () => {
    const event = normalizeOne(sample('zeek-docs', 'dhcp'), 'dhcp');
    assert.equal(event.outcome, 'success');
    assert.ok(event.entityKeys.includes('host:3071n0098017422'));
    assert.ok(event.entityKeys.includes('domain:3071n0098017422.fcps.edu'));
    assert.deepEqual(event.correlation, { uids: ['COoA8M1gbTowuPlVT', 'CapFoX32zVg3R6TATc'] });
  });
});

describe('networkMonitor generic mapping', () => {
  it('maps an unmapped protocol log to zeek_<log> with endpoints from id.*', () => {
    const event = normalizeOne(sample('zeek-docs', 'ldap'), 'ldap');
    assert.equal(event.category, 'network');
    assert.equal(event.class, 'zeek_ldap');
    assert.equal(event.activity, 'observe');
    assert.deepEqual(event.destinationEndpoint, { ip: '10.0.0.2', port: 3268 });
    assert.deepEqual(event.service, { name: 'ldap', port: 3268 });
  });

  it('puts sensor logs in health, known_* in discovery and any other name in network', () => {
    assert.equal(normalizeOne(sample('zeek-docs', 'capture_loss'), 'capture_loss').category, 'health');
    assert.equal(normalizeOne({ ts: 1, host: '10.0.0.9' }, 'known_modbus').category, 'discovery');
    const custom = normalizeOne({ ts: 1, anything: 'x' }, 'my-custom.log');
    assert.equal(custom.category, 'network');
    assert.equal(custom.class, 'zeek_my_custom_log');
    assert.equal(custom.source.instance, 'my-custom.log');
  });

  it('reads the outcome of a generic log from its success flag', () => {
    assert.equal(normalizeOne({ ts: 1, success: false }, 'postgresql').outcome, 'failure');
    assert.equal(normalizeOne({ ts: 1 }, 'postgresql').outcome, 'unknown');
  });
});

describe('networkMonitor refusals and identity', () => {
  it('refuses a record whose _path names another log', () => {
    assert.equal(refusal({ _path: 'dns', ts: 1 }, 'conn'), '_path: record is a "dns" log but logType is "conn"');
    assert.match(refusal({ _path: 5, ts: 1 }, 'conn'), /^_path: /);
  });

  it('takes the log name from _path when no logType is given, and refuses when neither is', () => {
    assert.equal(normalizeOne({ _path: 'dns', ts: 1, query: 'a.example' }, undefined).class, 'dns_query');
    assert.match(refusal({ ts: 1 }), /^logType: /);
    assert.match(refusal({ ts: 1 }, '../etc/passwd'), /^logType: /);
  });

  it('refuses what is not a JSON object', () => {
    for (const record of [null, [], [{ ts: 1 }], 'conn', 42, true]) {
      assert.equal(refusal(record, 'conn'), 'record: expected a JSON object');
    }
  });

  it('refuses id.* fields of the wrong type, naming the field', () => {
    assert.equal(refusal({ ts: 1, 'id.orig_p': '443' }, 'conn'), 'id.orig_p: expected a port number 0..65535');
    assert.equal(refusal({ ts: 1, 'id.resp_p': 70000 }, 'conn'), 'id.resp_p: expected a port number 0..65535');
    assert.equal(refusal({ ts: 1, 'id.orig_h': 167772161 }, 'conn'), 'id.orig_h: expected an IP address string');
    assert.equal(refusal({ ts: 1, 'id.resp_h': 'example.com' }, 'conn'), 'id.resp_h: expected an IP address string');
  });

  it('gives the same record the same id, whatever its key order or ingest time', () => {
    const record = sample('zeek-docs', 'conn');
    const first = normalizeOne(record, 'conn');
    const again = networkMonitor.normalize(record, { ingestedAt: '2025-01-01T00:00:00Z', logType: 'conn' });
    const reordered = Object.fromEntries(Object.entries(record).reverse());
    assert.ok(again.ok);
    assert.equal(again.events[0]!.id, first.id);
    assert.equal(normalizeOne(reordered, 'conn').id, first.id);
    assert.equal(first.source.recordId, normalizeOne(reordered, 'conn').source.recordId);
    assert.notEqual(normalizeOne({ ...record, uid: 'Cother' }, 'conn').id, first.id);
  });

  it('refuses a record nested too deeply to hash instead of throwing', () => {
    let deep: unknown = [];
    for (let i = 0; i < 200_000; i += 1) deep = [deep];
    assert.match(refusal({ ts: 1, deep }, 'conn'), /^record: /);
  });
});

const PLAUSIBLE_KEYS = [
  'ts', '_path', 'uid', 'id.orig_h', 'id.orig_p', 'id.resp_h', 'id.resp_p', 'proto', 'service', 'conn_state', 'history',
  'query', 'answers', 'rcode', 'rcode_name', 'auth_success', 'auth_attempts', 'note', 'src', 'dst', 'p', 'host',
  'host_name', 'client', 'username', 'hostname', 'cookie', 'result', 'fuid', 'fuids', 'uids', 'id', 'fingerprint',
  'certificate.serial', 'san.dns', 'cert_chain_fps', 'cert_chain_fuids', 'server_name', 'established', 'success',
  'status', 'status_code', 'reply_code', 'last_reply', 'action', 'tunnel_type', 'path', 'msg_types', 'port_num',
  'port_proto', 'request_type', 'error_msg', 'seen_bytes', 'total_bytes', 'missing_bytes', 'notice', 'user',
  'tx_hosts', 'tunnel_parents', 'community_id', 'client_addr', 'assigned_addr', 'server_addr', 'client_fqdn',
];
const LOG_TYPES = [...NETWORK_MONITOR_LOG_TYPES, 'ldap', 'capture_loss', 'known_modbus', 'analyzer', 'pe', 'x.y-z'];

const ipArb = fc.oneof(fc.ipV4(), fc.ipV6());
const plausibleValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  ipArb,
  fc.integer({ min: -5, max: 70000 }),
  fc.constantFrom('SF', 'S0', 'OTH', 'NXDOMAIN', 'NOERROR', 'Scan::Port_Scan', 'SMB::FILE_OPEN', 'Tunnel::TEREDO',
    '\\\\host\\share', 'ssl,smtp', 'TGS', 'user/REALM', '250 ok', 'DdAR', 'constructor', '__proto__'),
  fc.array(fc.oneof(ipArb, fc.string(), fc.domain()), { maxLength: 80 }),
);
const validTs = fc.oneof(
  fc.double({ min: 0, max: 4e9, noNaN: true }),
  fc.integer({ min: 100_000_000_001, max: 4_000_000_000_000 }),
  fc.date({ min: new Date('1971-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true })
    .map((d) => d.toISOString()),
);

function assertNeverThrowsAndValid(record: unknown, logType: string | undefined): NormalizedEvent[] {
  const result = networkMonitor.normalize(record, { ...CTX, logType });
  if (!result.ok) {
    assert.equal(typeof result.error, 'string');
    assert.ok(result.error.length > 0 && result.error.length < 300);
    return [];
  }
  for (const event of result.events) {
    assertValid(event);
    assert.equal(new Set(event.entityKeys).size, event.entityKeys.length, 'entity keys are deduplicated');
  }
  return result.events;
}

describe('networkMonitor properties', () => {
  it('never throws on arbitrary JSON and only returns valid events', () => {
    fc.assert(fc.property(fc.jsonValue(), fc.option(fc.constantFrom(...LOG_TYPES), { nil: undefined }), (record, logType) => {
      assertNeverThrowsAndValid(record, logType);
    }), { numRuns: 300 });
  });

  it('never throws on objects with plausible Zeek keys and arbitrary values', () => {
    const record = fc.dictionary(fc.constantFrom(...PLAUSIBLE_KEYS), plausibleValue, { maxKeys: 25 });
    fc.assert(fc.property(record, fc.constantFrom(...LOG_TYPES), (r, logType) => {
      assertNeverThrowsAndValid(r, logType);
    }), { numRuns: 500 });
  });

  it('accepts every record with a valid ts and well-typed id.* fields', () => {
    const fields = fc.dictionary(fc.constantFrom(...PLAUSIBLE_KEYS.filter((k) => k !== '_path' && !k.startsWith('id.'))),
      plausibleValue, { maxKeys: 20 });
    const tuple = fc.record({
      'id.orig_h': ipArb, 'id.orig_p': fc.integer({ min: 0, max: 65535 }),
      'id.resp_h': ipArb, 'id.resp_p': fc.integer({ min: 0, max: 65535 }),
    }, { requiredKeys: [] });
    fc.assert(fc.property(fields, tuple, validTs, fc.constantFrom(...LOG_TYPES), (f, t, ts, logType) => {
      const events = assertNeverThrowsAndValid({ ...f, ...t, ts }, logType);
      assert.equal(events.length, 1, 'a well-typed record is accepted');
      assert.equal(events[0]!.source.instance, logType);
    }), { numRuns: 500 });
  });
});
