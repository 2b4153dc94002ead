import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { parseRfc5424, type SyslogMessage } from '../../src/normalizers/syslog/rfc5424.js';
import { isoFromNanos } from '../../src/kernel/time.js';
import { fixturePath } from '../helpers/paths.js';

interface Case { readonly id: number; readonly input: string | null; readonly input_hex: string; readonly rfc5424_valid: boolean }

const dir = (file: string): string => fixturePath('syslog-rfc5424', file);
const cases: Case[] = readFileSync(dir('cases.jsonl'), 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Case);

function caseInput(id: number): string {
  const found = cases.find((c) => c.id === id);
  assert.ok(found?.input != null, `case ${id} has a string input`);
  return found.input;
}

/** The raw LF-framed lines of a .log file, as bytes (the trailing LF is framing, not MSG). */
function logLines(file: string): Buffer[] {
  const bytes = readFileSync(dir(file));
  const lines: Buffer[] = [];
  for (let start = 0; start < bytes.length;) {
    const lf = bytes.indexOf(0x0a, start);
    const end = lf < 0 ? bytes.length : lf;
    lines.push(bytes.subarray(start, end));
    start = end + 1;
  }
  return lines;
}

function parsed(input: string | Uint8Array): SyslogMessage {
  const result = parseRfc5424(input);
  assert.ok(result.ok, `expected a valid message, got ${result.ok ? '' : result.error}: ${JSON.stringify(String(input))}`);
  return result.message;
}

function errorOf(input: string | Uint8Array): string {
  const result = parseRfc5424(input);
  assert.ok(!result.ok, `expected a refusal: ${JSON.stringify(String(input))}`);
  return result.error;
}

describe('parseRfc5424 on the sample corpus', () => {
  it('agrees with rfc5424_valid on every case, as a string and as UTF-8 bytes', () => {
    assert.equal(cases.length, 223);
    const disagreements: unknown[] = [];
    for (const c of cases) {
      const inputs: Array<string | Uint8Array> = c.input === null ? [Buffer.from(c.input_hex, 'hex')] : [c.input, Buffer.from(c.input, 'utf8')];
      for (const input of inputs) {
        const result = parseRfc5424(input);
        if (result.ok !== c.rfc5424_valid) {
          const verdict = result.ok ? 'accepted' : result.error;
          disagreements.push({ id: c.id, input: c.input, input_hex: c.input_hex, bytes: typeof input !== 'string', verdict });
        }
      }
    }
    assert.deepEqual(disagreements, []);
  });

  it('accepts every line of valid.log, constructed-linux-valid.log and disputed.log', () => {
    const files = { 'valid.log': 71, 'constructed-linux-valid.log': 18, 'disputed.log': 1 };
    for (const [file, count] of Object.entries(files)) {
      const lines = logLines(file);
      assert.equal(lines.length, count, file);
      for (const line of lines) {
        parsed(line);
        parsed(line.toString('utf8'));
      }
    }
  });

  it('refuses every line of invalid.log and constructed-linux-invalid.log', () => {
    const files = { 'invalid.log': 81, 'constructed-linux-invalid.log': 9 };
    for (const [file, count] of Object.entries(files)) {
      const lines = logLines(file);
      assert.equal(lines.length, count, file);
      for (const line of lines) {
        errorOf(line);
        errorOf(line.toString('utf8'));
      }
    }
  });
});

describe('parseRfc5424 fields', () => {
  it('reads RFC 5424 example 1: facility, severity, NIL PROCID and SD, BOM-prefixed MSG', () => {
    const m = parsed(caseInput(193));
    assert.deepEqual([m.pri, m.facility, m.severity, m.version], [34, 4, 2, 1]);
    assert.equal(m.timestamp, '2003-10-11T22:14:15.003Z');
    assert.equal(isoFromNanos(m.timestampNanos!), '2003-10-11T22:14:15.003Z');
    assert.deepEqual([m.hostname, m.appName, m.procId, m.msgId], ['mymachine.example.com', 'su', null, 'ID47']);
    assert.deepEqual(m.structuredData, []);
    assert.equal(m.bom, true);
    assert.equal(m.message, "'su root' failed for lonvick on /dev/pts/8");
  });

  it('reads RFC 5424 example 2: an offset timestamp with microseconds and no MSGID', () => {
    const m = parsed(caseInput(194));
    assert.deepEqual([m.facility, m.severity], [20, 5]);
    assert.equal(m.timestamp, '2003-08-24T05:14:15.000003-07:00');
    assert.equal(isoFromNanos(m.timestampNanos!), '2003-08-24T12:14:15.000003Z');
    assert.deepEqual([m.hostname, m.appName, m.procId, m.msgId], ['192.0.2.1', 'myproc', '8710', null]);
    assert.equal(m.bom, false);
    assert.equal(m.message, "%% It's time to make the do-nuts.");
  });

  it('reads RFC 5424 examples 3 and 4: structured data params, with and without MSG', () => {
    const three = parsed(caseInput(195));
    assert.deepEqual(three.structuredData, [
      { id: 'exampleSDID@32473', params: [['iut', '3'], ['eventSource', 'Application'], ['eventID', '1011']] },
    ]);
    assert.equal(three.message, 'An application event log entry...');
    const four = parsed(Buffer.from(caseInput(196), 'utf8'));
    assert.deepEqual(four.structuredData.map((e) => e.id), ['exampleSDID@32473', 'examplePriority@32473']);
    assert.deepEqual(four.structuredData[1]?.params, [['class', 'high']]);
    assert.equal(four.message, null);
  });

  it('unescapes \\" \\\\ \\] in PARAM-VALUE and keeps any other backslash', () => {
    const m = parsed(caseInput(211));
    assert.deepEqual(m.structuredData[0]?.params, [['path', '/a]b'], ['quote', 'say "hi"'], ['bs', 'C:\\temp'], ['odd', 'a\\nb']]);
    assert.equal(m.message, 'request done');
  });

  it('reads the shifted-field trap as the grammar says, not as it looks', () => {
    const trap = parsed(caseInput(220));
    assert.deepEqual([trap.hostname, trap.appName, trap.procId, trap.msgId], ['bastion', '01', 'sshd', '4242']);
    assert.equal(trap.message, '- Failed password');
    const rfc3164Like = parsed(caseInput(219));
    assert.deepEqual([rfc3164Like.appName, rfc3164Like.procId], ['sshd[4242]', null]);
  });

  it('treats a MSG starting with [ after a NIL STRUCTURED-DATA as text', () => {
    const m = parsed(caseInput(207));
    assert.deepEqual(m.structuredData, []);
    assert.ok(m.message?.startsWith('[UFW BLOCK] IN=eth0'));
  });

  it('tells an empty MSG from an absent one', () => {
    assert.equal(parsed(caseInput(86)).message, '');
    assert.equal(parsed(caseInput(73)).message, null);
    assert.equal(parsed(caseInput(199)).message?.endsWith('rhost=203.0.113.50  user=root'), true);
  });

  it('decodes a MSG without BOM as UTF-8 when it is, else as Latin-1 byte for byte', () => {
    const latin = parsed(Buffer.from('3c313e31202d202d202d202d202d202d20666f6e64fc20627275756368742076656c6c206368e4e473', 'hex'));
    assert.equal(latin.message, 'fondü bruucht vell chääs');
    assert.equal(latin.bom, false);
    assert.equal(parsed(Buffer.from('<1>1 - - - - - - fondü', 'utf8')).message, 'fondü');
  });

  it('gives the same parts for a string and for its UTF-8 bytes', () => {
    for (const id of [97, 118, 138, 195]) {
      assert.deepEqual(parsed(Buffer.from(caseInput(id), 'utf8')), parsed(caseInput(id)), `case ${id}`);
    }
  });
});

describe('parseRfc5424 errors', () => {
  it('names the part and the 1-based column', () => {
    assert.equal(errorOf('<192>1 - - - - - -'), 'PRI: value 192 out of range 0..191 at column 2');
    assert.equal(errorOf('<002>1 - - - - - -'), 'PRI: leading zero at column 2');
    assert.equal(errorOf('<1>0 - - - - - -'), 'VERSION: must start with a nonzero digit at column 4');
    assert.equal(errorOf('<101>127 2003-09-29T22:09:01.000000000009Z - - - - -'), 'TIMESTAMP: more than 6 fraction digits at column 30');
    assert.equal(errorOf('<1>1 2018-02-29T22:14:16Z - - - - -'), 'TIMESTAMP: day 29 does not exist in 2018-02 at column 14');
    assert.equal(errorOf('<1>1 - -   - - -'), 'APP-NAME: expected PRINTUSASCII but found SP at column 10');
    assert.equal(errorOf('<1>1 - - - - - [a b="c"'), 'STRUCTURED-DATA: unterminated SD-ELEMENT at column 16');
    assert.equal(errorOf('<1>1 - - - - - [a][b][a x="1"]'), 'STRUCTURED-DATA: duplicate SD-ID "a" at column 23');
    assert.equal(errorOf('<1>1 - - - - - [a b="x]"]'), "STRUCTURED-DATA: unescaped ']' in PARAM-VALUE at column 23");
    assert.equal(errorOf('<1>1 - - - - - -\n<2>1 - - - - - -'), 'STRUCTURED-DATA: expected SP before MSG but found 0x0A at column 17');
    const overlong = Buffer.from('3c313e31202d202d202d202d202d202d20efbbbfc0af', 'hex');
    assert.equal(errorOf(overlong), 'MSG: text after the BOM is not valid UTF-8 at column 18');
    assert.equal(errorOf('<1>1 - - - - - - \ufeffok\ud800'), 'MSG: lone surrogate after the BOM at column 21');
  });

  it('refuses input over 64 KiB, counting UTF-8 bytes', () => {
    const head = '<1>1 - - - - - - ';
    const fits = head + 'x'.repeat(65536 - head.length);
    assert.equal(parsed(fits).message?.length, 65536 - head.length);
    assert.equal(parsed(Buffer.from(fits)).message?.length, 65536 - head.length);
    const tooLong = 'MSG: message longer than 65536 bytes';
    assert.equal(errorOf(fits + 'x'), tooLong);
    assert.equal(errorOf(Buffer.from(fits + 'x')), tooLong);
    assert.equal(errorOf(head + 'é'.repeat(33000)), tooLong);
  });

  it('refuses timestamps it cannot represent instead of misdating them', () => {
    assert.match(errorOf('<1>1 0050-01-01T00:00:00Z - - - - -'), /^TIMESTAMP: year 0050 .* at column 6$/);
    assert.match(errorOf('<1>1 9999-12-31T23:59:59-01:00 - - - - -'), /^TIMESTAMP: instant outside .* at column 6$/);
    assert.equal(isoFromNanos(parsed('<1>1 0100-01-01T00:30:00+01:00 - - - - -').timestampNanos!), '0099-12-31T23:30:00Z');
  });
});

describe('parseRfc5424 properties', () => {
  const validLines = [...logLines('valid.log'), ...logLines('constructed-linux-valid.log')].map((b) => b.toString('utf8'));

  it('never throws on arbitrary strings, bytes or JSON values', () => {
    const anyResult = (input: unknown): void => {
      const result = parseRfc5424(input as string);
      const shown = JSON.stringify(result, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v));
      assert.ok(result.ok ? typeof result.message.pri === 'number' : /^[A-Z-]+: /.test(result.error), shown);
    };
    fc.assert(fc.property(fc.string({ unit: 'binary' }), anyResult), { numRuns: 500 });
    fc.assert(fc.property(fc.uint8Array(), anyResult), { numRuns: 500 });
    fc.assert(fc.property(fc.jsonValue(), anyResult), { numRuns: 200 });
    // A valid header first, so the arbitrary tail reaches STRUCTURED-DATA and MSG.
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (tail) => anyResult('<1>1 - - - - - ' + tail)), { numRuns: 500 });
    fc.assert(fc.property(fc.uint8Array(), (tail) => anyResult(Buffer.concat([Buffer.from('<1>1 - h a p m [x y="'), tail]))), { numRuns: 500 });
  });

  it('gives the same verdict and parts for a damaged line as a string and as UTF-8 bytes', () => {
    const mutation = fc.record({
      line: fc.constantFrom(...validLines), at: fc.nat(), unit: fc.string({ unit: 'binary', maxLength: 2 }), cut: fc.boolean(),
    });
    fc.assert(fc.property(mutation, ({ line, at, unit, cut }) => {
      const i = at % (line.length + 1);
      const changed = line.slice(0, i) + unit + line.slice(cut ? i + 1 : i);
      // Cutting half a surrogate pair leaves a string with no exact UTF-8 form (Buffer would substitute U+FFFD).
      fc.pre(!/[\uD800-\uDFFF]/u.test(changed));
      const fromString = parseRfc5424(changed);
      const fromBytes = parseRfc5424(Buffer.from(changed, 'utf8'));
      assert.equal(fromBytes.ok, fromString.ok, changed);
      if (fromString.ok && fromBytes.ok) assert.deepEqual(fromBytes.message, fromString.message);
    }), { numRuns: 1000 });
  });

  it('parses a generated valid message back to the parts it was built from', () => {
    fc.assert(fc.property(syslogParts(), (parts) => {
      const text = render(parts);
      assert.deepEqual(parsed(text), expected(parts), text);
      assert.deepEqual(parsed(Buffer.from(text, 'utf8')), expected(parts), text);
    }), { numRuns: 500 });
  });
});

interface Parts {
  pri: number; version: number; time: { text: string; nanos: bigint } | null;
  hostname: string | null; appName: string | null; procId: string | null; msgId: string | null;
  sd: Array<{ id: string; params: Array<[string, string]> }>; msg: { bom: boolean; text: string } | null;
}

const printable = (max: number): fc.Arbitrary<string> =>
  fc.string({ unit: fc.integer({ min: 33, max: 126 }).map((c) => String.fromCharCode(c)), minLength: 1, maxLength: max });
const field = (max: number): fc.Arbitrary<string | null> => fc.option(printable(max).filter((s) => s !== '-'), { nil: null });
const sdName = printable(32).map((s) => s.replace(/[="\]]/g, '_'));
/** PARAM-VALUE text rich in the characters that need escaping and in backslashes that must stay literal. */
const paramValue = fc.array(
  fc.oneof(fc.constantFrom('"', '\\', ']', '\\n', '[', ' ', '='), fc.string({ unit: 'binary', maxLength: 3 })), { maxLength: 6 },
).map((a) => a.join(''));

/** A TIMESTAMP text and the instant it names, built independently of the parser's arithmetic. */
const timestamp = fc.record({
  ns: fc.bigInt({ min: 0n, max: 4102444799999999999n }), digits: fc.integer({ min: 0, max: 6 }),
  offsetMinutes: fc.integer({ min: -1439, max: 1439 }), zulu: fc.boolean(),
}).map(({ ns, digits, offsetMinutes, zulu }) => {
  const nanos = ns - (ns % 10n ** BigInt(9 - digits));
  const offset = zulu ? 0 : offsetMinutes;
  const fraction = nanos % 1_000_000_000n;
  const local = nanos + BigInt(offset) * 60_000_000_000n;
  const fractionText = digits === 0 ? '' : '.' + fraction.toString().padStart(9, '0').slice(0, digits);
  const abs = Math.abs(offset);
  const zone = zulu ? 'Z' : `${offset < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  return { text: isoFromNanos(local - fraction).slice(0, 19) + fractionText + zone, nanos };
});

function syslogParts(): fc.Arbitrary<Parts> {
  return fc.record({
    pri: fc.integer({ min: 0, max: 191 }), version: fc.integer({ min: 1, max: 999 }), time: fc.option(timestamp, { nil: null }),
    hostname: field(255), appName: field(48), procId: field(128), msgId: field(32),
    sd: fc.uniqueArray(
      fc.record({ id: sdName, params: fc.array(fc.tuple(sdName, paramValue), { maxLength: 4 }) }), { selector: (e) => e.id, maxLength: 4 },
    ),
    // Without the BOM flag a leading U+FEFF would be read back as the BOM, so it is not generated.
    msg: fc.option(
      fc.record({ bom: fc.boolean(), text: fc.string({ unit: 'binary' }) }).filter((m) => m.bom || !m.text.startsWith('\ufeff')), { nil: null },
    ),
  });
}

function render(p: Parts): string {
  const escape = (v: string): string => v.replace(/["\\\]]/g, '\\$&');
  const sd = p.sd.length === 0 ? '-' : p.sd.map((e) => `[${e.id}${e.params.map(([n, v]) => ` ${n}="${escape(v)}"`).join('')}]`).join('');
  const header = [p.time?.text, p.hostname, p.appName, p.procId, p.msgId].map((f) => f ?? '-').join(' ');
  const msg = p.msg === null ? '' : ' ' + (p.msg.bom ? '\ufeff' : '') + p.msg.text;
  return `<${p.pri}>${p.version} ${header} ${sd}${msg}`;
}

function expected(p: Parts): SyslogMessage {
  return {
    pri: p.pri, facility: Math.floor(p.pri / 8), severity: p.pri % 8, version: p.version,
    timestamp: p.time?.text ?? null, timestampNanos: p.time?.nanos ?? null,
    hostname: p.hostname, appName: p.appName, procId: p.procId, msgId: p.msgId,
    structuredData: p.sd.map((e) => ({ id: e.id, params: e.params })), message: p.msg?.text ?? null, bom: p.msg?.bom ?? false,
  };
}
