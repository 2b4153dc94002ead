import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { CATEGORIES, OUTCOMES } from '../../src/events/normalized-event.js';
import { programName, recognizeLinuxMessage, type RecognizedMessage } from '../../src/normalizers/linux-messages.js';

function recognize(program: string | undefined, message: string): RecognizedMessage {
  const found = recognizeLinuxMessage({ message, host: 'bastion-01', pid: '4242', ...(program === undefined ? {} : { program }) });
  assert.ok(found, `expected ${program ?? '(no program)'} "${message}" to be recognized`);
  return found;
}

function verdict(r: RecognizedMessage): string {
  return `${r.category}/${r.class}/${r.activity}/${r.outcome}/${r.severity}`;
}

describe('recognizeLinuxMessage', () => {
  const table: readonly (readonly [string, string, string, Record<string, string>])[] = [
    ['sshd', 'Failed password for invalid user admin from 203.0.113.50 port 52514 ssh2',
      'identity/authentication/logon/failure/5', { user: 'admin', src_ip: '203.0.113.50', src_port: '52514', auth_method: 'password' }],
    ['sshd-session', 'Failed publickey for root from 2001:db8::7 port 40022 ssh2',
      'identity/authentication/logon/failure/5', { user: 'root', src_ip: '2001:db8::7', src_port: '40022' }],
    ['sshd', 'Accepted password for alice from 198.51.100.23 port 51234 ssh2',
      'identity/authentication/logon/success/3', { user: 'alice', src_ip: '198.51.100.23', auth_method: 'password' }],
    ['sshd', 'Invalid user oracle from 203.0.113.50', 'identity/authentication/logon/failure/6', { user: 'oracle', src_ip: '203.0.113.50' }],
    ['sshd', 'error: maximum authentication attempts exceeded for root from 203.0.113.50 port 4022 ssh2 [preauth]',
      'identity/authentication/logon/failure/6', { user: 'root', src_port: '4022' }],
    ['sshd', 'Disconnected from user alice 198.51.100.23 port 51234', 'identity/authentication/logoff/success/1', { user: 'alice', src_ip: '198.51.100.23' }],
    ['sshd', 'pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=203.0.113.50  user=root',
      'identity/authentication/logon/failure/5', { user: 'root', src_ip: '203.0.113.50', pam_service: 'sshd' }],
    ['sshd', 'pam_unix(sshd:session): session closed for user alice', 'identity/authentication/session_close/success/1', { user: 'alice' }],
    ['sudo', 'alice : TTY=pts/0 ; PWD=/home/alice ; USER=root ; COMMAND=/bin/sh -c echo a ; echo b',
      'identity/privilege_escalation/sudo/success/3', { user: 'alice', USER: 'root', TTY: 'pts/0', PWD: '/home/alice', COMMAND: '/bin/sh -c echo a ; echo b' }],
    ['sudo', 'eve : user NOT in sudoers ; TTY=pts/2 ; PWD=/home/eve ; USER=root ; COMMAND=/usr/bin/id',
      'identity/privilege_escalation/sudo/failure/7', { user: 'eve', USER: 'root', reason: 'user NOT in sudoers' }],
    ['sudo', 'pam_unix(sudo:auth): authentication failure; logname=alice uid=1000 euid=0 tty=/dev/pts/0 ruser=alice rhost=  user=alice',
      'identity/privilege_escalation/sudo/failure/7', { user: 'alice' }],
    ['su', '(to root) alice on pts/0', 'identity/privilege_escalation/su/success/4', { user: 'alice', USER: 'root', TTY: 'pts/0' }],
    ['su', 'FAILED SU (to root) alice on pts/0', 'identity/privilege_escalation/su/failure/7', { user: 'alice', USER: 'root' }],
    ['su', 'pam_unix(su:auth): authentication failure; logname=alice uid=1000 euid=0 tty=/dev/pts/0 ruser=alice rhost=  user=root',
      'identity/privilege_escalation/su/failure/7', { user: 'alice', USER: 'root' }],
    ['useradd', 'new user: name=bob, UID=1001, GID=1001, home=/home/bob, shell=/bin/bash, from=/dev/pts/0',
      'identity/account_management/user_created/success/5', { user: 'bob', uid: '1001', gid: '1001', shell: '/bin/bash' }],
    ['useradd', 'new user: name=john, UID=0, GID=0, home=/home/john, shell=/bin/bash', 'identity/account_management/user_created/success/8', { uid: '0' }],
    ['groupadd', 'new group: name=devs, GID=1002', 'identity/account_management/group_created/success/4', { group: 'devs', gid: '1002' }],
    ['usermod', "add 'bob' to group 'sudo'", 'identity/account_management/group_member_added/success/7', { user: 'bob', group: 'sudo' }],
    ['userdel', "delete user 'bob'", 'identity/account_management/user_deleted/success/5', { user: 'bob' }],
    ['passwd', 'pam_unix(passwd:chauthtok): password changed for bob', 'identity/account_management/password_changed/success/4', { user: 'bob' }],
    ['systemd', "nginx.service: Failed with result 'exit-code'.", 'system/service/fail/failure/5', { unit: 'nginx.service', result: 'exit-code' }],
    ['systemd', 'Failed to start nginx.service - A high performance web server.', 'system/service/start/failure/5', { unit: 'nginx.service' }],
    ['systemd', 'Started OpenBSD Secure Shell server.', 'system/service/start/success/1', { description: 'OpenBSD Secure Shell server' }],
    ['systemd-logind', 'New session 4 of user alice.', 'identity/authentication/session_open/success/2', { user: 'alice', session_id: '4' }],
    ['kernel', 'Out of memory: Killed process 7812 (java) total-vm:8123456kB, UID:1002 pgtables:8120kB',
      'system/process/oom_kill/success/6', { pid: '7812', process: 'java', uid: '1002' }],
    ['kernel', '[ 8123.004512] Memory cgroup out of memory: Killed process 99 (my proc) total-vm:1kB',
      'system/process/oom_kill/success/6', { pid: '99', process: 'my proc' }],
    ['kernel', '[UFW BLOCK] IN=eth0 OUT= SRC=203.0.113.9 DST=10.0.0.5 LEN=60 PROTO=TCP SPT=51544 DPT=23 SYN URGP=0',
      'network/firewall/block/failure/3', { src_ip: '203.0.113.9', dst_ip: '10.0.0.5', src_port: '51544', dst_port: '23', proto: 'tcp', action: 'block' }],
    ['kernel', 'IPTables-Accepted: IN=eth0 OUT= SRC=198.51.100.1 DST=10.0.0.5 PROTO=UDP SPT=53 DPT=40000',
      'network/firewall/allow/success/1', { action: 'accept', blocked: 'false', proto: 'udp' }],
  ];
  for (const [program, message, expected, fields] of table) {
    it(`maps ${program}: "${message.slice(0, 60)}"`, () => {
      const r = recognize(program, message);
      assert.equal(verdict(r), expected);
      for (const [k, v] of Object.entries(fields)) assert.equal(r.fields[k], v, `field ${k}`);
    });
  }

  it('gives an sshd failure an actor, a source endpoint and typed entity keys', () => {
    const r = recognize('sshd', 'Failed password for root from 203.0.113.50 port 52530 ssh2');
    assert.deepEqual(r.actor, { user: 'root', host: 'bastion-01' });
    assert.deepEqual(r.sourceEndpoint, { ip: '203.0.113.50', port: 52530 });
    assert.deepEqual(r.entityKeys, ['user:root', 'host:bastion-01', 'ip:203.0.113.50', 'service:sshd', 'process:bastion-01/4242']);
  });

  it('takes the address sshd appended, not one smuggled into the user name', () => {
    const r = recognize('sshd', 'Failed password for invalid user x from 10.9.9.9 port 1 from 203.0.113.7 port 2222 ssh2');
    assert.equal(r.fields['src_ip'], '203.0.113.7');
    assert.equal(r.fields['user'], 'x from 10.9.9.9 port 1');
  });

  it('keeps a host name sshd printed instead of an address out of src_ip', () => {
    const r = recognize('sshd', 'Failed password for root from scanner.example.net port 22 ssh2');
    assert.equal(r.fields['src_ip'], undefined);
    assert.equal(r.fields['src_host'], 'scanner.example.net');
    assert.ok(r.entityKeys.includes('host:scanner.example.net'));
  });

  it('names the sudo target and the invoking user as separate entities', () => {
    const r = recognize('sudo', '   bob : TTY=pts/3 ; PWD=/home/bob ; USER=#-1 ; COMMAND=/usr/bin/id');
    assert.equal(r.fields['USER'], '#-1');
    assert.deepEqual(r.actor, { user: 'bob', host: 'bastion-01' });
    assert.ok(r.entityKeys.includes('user:#-1') && r.entityKeys.includes('user:bob'));
  });

  it('does not make the created account the actor of an account change', () => {
    const r = recognize('useradd', 'new user: name=bob, UID=1001, GID=1001, home=/home/bob, shell=/bin/bash');
    assert.deepEqual(r.actor, { host: 'bastion-01' });
    assert.ok(r.entityKeys.includes('user:bob'));
  });

  it('adds the firewall destination endpoint, service and port key', () => {
    const r = recognize('kernel', '[UFW BLOCK] IN=eth0 OUT= SRC=203.0.113.9 DST=10.0.0.5 PROTO=TCP SPT=51544 DPT=23');
    assert.deepEqual(r.destinationEndpoint, { ip: '10.0.0.5', port: 23 });
    assert.deepEqual(r.service, { port: 23, protocol: 'tcp' });
    assert.ok(r.entityKeys.includes('port:tcp/23') && r.entityKeys.includes('ip:203.0.113.9'));
  });

  it('recognizes by text alone when no program is known, but not sshd text from another program', () => {
    assert.equal(recognize(undefined, 'Accepted publickey for alice from 198.51.100.23 port 1 ssh2').activity, 'logon');
    assert.equal(recognizeLinuxMessage({ program: 'nginx', message: 'Failed password for root from 1.2.3.4 port 1 ssh2' }), undefined);
    assert.equal(recognizeLinuxMessage({ program: 'sshd', message: 'Server listening on 0.0.0.0 port 22.' }), undefined);
    assert.equal(recognizeLinuxMessage({ program: 'sshd', message: '   ' }), undefined);
  });

  it('canonicalizes program names', () => {
    assert.equal(programName('sshd[4242]'), 'sshd');
    assert.equal(programName('/USR/SBIN/CROND'), 'crond');
    assert.equal(programName('-'), undefined);
    assert.equal(programName(undefined), undefined);
  });

  it('answers hostile input in linear time', () => {
    const n = 100_000;
    const hostile: readonly (readonly [string, string])[] = [
      ['sshd', `Failed password for ${'x from '.repeat(n / 7)}`],
      ['sshd', `Connection closed by invalid user ${' port 1'.repeat(n / 7)}`],
      ['sudo', `a : ${'X= ; '.repeat(n / 5)}`],
      ['su', `(to ${'r'.repeat(n)}`],
      ['kernel', `IN=${' IN='.repeat(n / 4)}`],
      ['kernel', `Out of memory: Killed process 1 (${'('.repeat(n)}`],
      ['systemd', `Failed to start ${'a.'.repeat(n / 2)}`],
      ['useradd', `new user: ${'a=, '.repeat(n / 4)}`],
      ['sshd', `pam_unix(sshd:auth): authentication failure; ${'a= '.repeat(n / 3)}`],
      ['sshd', `pam_unix(sshd:session): session opened for user ${'('.repeat(n)}`],
    ];
    // Quadratic matching of 100,000 characters takes seconds; linear takes about a millisecond. The
    // best of five runs is compared, so a busy machine preempting one run cannot fail the test.
    for (const [program, message] of hostile) {
      const runs = Array.from({ length: 5 }, () => {
        const start = performance.now();
        recognizeLinuxMessage({ program, message });
        recognizeLinuxMessage({ message });
        return performance.now() - start;
      });
      assert.ok(Math.min(...runs) < 200, `${program} took ${Math.min(...runs).toFixed(0)} ms at best`);
    }
  });

  it('never throws and answers only in its vocabulary, for any text and program', () => {
    const program = fc.option(fc.constantFrom('sshd', 'sshd-session', 'sudo', 'su', 'useradd', 'usermod', 'systemd', 'systemd-logind', 'kernel', 'x'), { nil: undefined });
    const words = fc.constantFrom('Failed ', 'password ', 'for ', 'invalid user ', 'from ', '1.2.3.4 ', 'port ', '22 ', ' : ', ' ; ',
      'USER=', 'COMMAND=', 'IN=', 'SRC=', 'DST=', 'pam_unix(sshd:auth): ', 'session opened for user ', '(', ')', "'", 'new user: ', 'name=');
    const text = fc.oneof(fc.string(), fc.array(words, { maxLength: 30 }).map((w) => w.join('')));
    fc.assert(fc.property(program, text, (p, message) => {
      const r = recognizeLinuxMessage({ message, ...(p === undefined ? {} : { program: p }), host: 'h' });
      if (r === undefined) return;
      assert.ok((CATEGORIES as readonly string[]).includes(r.category) && (OUTCOMES as readonly string[]).includes(r.outcome));
      assert.ok(r.severity >= 0 && r.severity <= 10);
      for (const key of r.entityKeys) assert.match(key, /^[a-z]+:.+/s);
    }), { numRuns: 500 });
  });
});
