import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MODIFIERS, planModifiers } from '../../src/detection/modifiers.js';
import { fieldRule, fieldRuleError, matches } from './rule-helpers.js';

const b64 = (text: string, encoding: BufferEncoding = 'utf8'): string => Buffer.from(text, encoding).toString('base64');

interface ModifierCase {
  readonly key: string;
  readonly value: unknown;
  readonly yes: ReadonlyArray<Record<string, unknown>>;
  readonly no: ReadonlyArray<Record<string, unknown>>;
}

/** Each modifier with at least one event it must match and one it must not. */
const TABLE: Record<string, ModifierCase> = {
  'plain value (case-insensitive equality)': { key: 'f', value: 'Foo', yes: [{ f: 'foo' }, { f: 'FOO' }], no: [{ f: 'foox' }, {}] },
  'value list (OR)': { key: 'f', value: ['a', 'b'], yes: [{ f: 'b' }], no: [{ f: 'c' }] },
  'array-valued field': { key: 'f', value: 'b', yes: [{ f: ['a', 'b'] }], no: [{ f: ['a', 'c'] }] },
  'integer compares as a number': { key: 'f', value: 0, yes: [{ f: 0 }, { f: '0' }], no: [{ f: 1 }, { f: 'zero' }, { f: '' }] },
  'boolean value': { key: 'f', value: true, yes: [{ f: true }, { f: 'True' }], no: [{ f: false }] },
  'empty value': { key: 'f', value: '', yes: [{ f: '' }], no: [{ f: 'x' }, {}] },
  'null value (absent or null)': { key: 'f', value: null, yes: [{}, { f: null }], no: [{ f: 'x' }, { f: '' }] },
  contains: { key: 'f|contains', value: 'mid', yes: [{ f: 'aMIDb' }], no: [{ f: 'mi d' }] },
  startswith: { key: 'f|startswith', value: 'ab', yes: [{ f: 'abc' }], no: [{ f: 'cab' }] },
  endswith: { key: 'f|endswith', value: 'ab', yes: [{ f: 'cAB' }], no: [{ f: 'abc' }] },
  'contains|all': { key: 'f|contains|all', value: ['-a', '-b'], yes: [{ f: 'x -b -a' }], no: [{ f: 'x -a' }] },
  cased: { key: 'f|cased', value: 'Foo', yes: [{ f: 'Foo' }], no: [{ f: 'foo' }] },
  're (case-sensitive, unanchored)': { key: 'f|re', value: 'ab+c', yes: [{ f: 'xabbcx' }], no: [{ f: 'ABBC' }] },
  're|i': { key: 'f|re|i', value: '^ab+c$', yes: [{ f: 'ABBC' }], no: [{ f: 'xabc' }] },
  're|m': { key: 'f|re|m', value: '^b$', yes: [{ f: 'a\nb' }], no: [{ f: 'a\nbc' }] },
  're|s': { key: 'f|re|s', value: 'a.b', yes: [{ f: 'a\nb' }], no: [{ f: 'a\n\nb' }] },
  'cidr v4': { key: 'f|cidr', value: '10.0.0.0/8', yes: [{ f: '10.200.1.1' }, { f: '::ffff:10.0.0.1' }], no: [{ f: '11.0.0.1' }, { f: 'not-an-ip' }] },
  'cidr v6': { key: 'f|cidr', value: 'fe80::/10', yes: [{ f: 'fe80::1%eth0' }, { f: 'FEBF::1' }], no: [{ f: 'fec0::1' }, { f: '10.0.0.1' }] },
  'exists: true': { key: 'f|exists', value: true, yes: [{ f: '' }, { f: null }], no: [{}] },
  'exists: false': { key: 'f|exists', value: false, yes: [{}], no: [{ f: 'x' }] },
  gt: { key: 'f|gt', value: 5, yes: [{ f: 6 }, { f: '7' }], no: [{ f: 5 }, { f: 'x' }] },
  gte: { key: 'f|gte', value: 5, yes: [{ f: 5 }], no: [{ f: 4.5 }] },
  lt: { key: 'f|lt', value: 5, yes: [{ f: -1 }], no: [{ f: 5 }] },
  lte: { key: 'f|lte', value: 5, yes: [{ f: '5' }], no: [{ f: 6 }] },
  'neq (present and different)': { key: 'f|neq', value: 'root', yes: [{ f: 'alice' }], no: [{ f: 'ROOT' }, {}] },
  'neq with a list (none of them)': { key: 'f|neq', value: ['a', 'b'], yes: [{ f: 'c' }], no: [{ f: 'b' }] },
  'base64|contains (case-sensitive)': { key: 'f|base64|contains', value: 'hello', yes: [{ f: `x${b64('hello')}y` }], no: [{ f: b64('hello').toUpperCase() }] },
  'base64offset|contains': {
    key: 'f|base64offset|contains', value: 'http://evil',
    yes: [{ f: b64('http://evil.example') }, { f: b64('Ghttp://evil.example') }, { f: b64('GEhttp://evil.example') }],
    no: [{ f: b64('http://good.example') }],
  },
  'wide|base64offset|contains': {
    key: 'f|wide|base64offset|contains', value: 'cmd',
    yes: [{ f: b64('run cmd /c', 'utf16le') }], no: [{ f: b64('run cmd /c') }],
  },
  'utf16be|base64offset|contains': {
    key: 'f|utf16be|base64offset|contains', value: 'cmd',
    yes: [{ f: Buffer.from([0, 0x20, 0, 0x63, 0, 0x6d, 0, 0x64]).toString('base64') }], no: [{ f: b64(' cmd') }],
  },
  'utf16|base64 (with byte order mark)': {
    key: 'f|utf16|base64', value: 'cmd', yes: [{ f: Buffer.from([0xff, 0xfe, 0x63, 0, 0x6d, 0, 0x64, 0]).toString('base64') }], no: [{ f: b64('cmd', 'utf16le') }],
  },
  'windash|contains': { key: 'f|windash|contains', value: ' -enc ', yes: [{ f: 'ps /enc x' }, { f: 'ps \u2013enc x' }, { f: 'ps -ENC x' }], no: [{ f: 'ps xenc x' }] },
  fieldref: { key: 'f|fieldref', value: 'g', yes: [{ f: 'Bob', g: 'bob' }], no: [{ f: 'bob', g: 'alice' }, { f: 'bob' }] },
  'fieldref|neq': { key: 'f|fieldref|neq', value: 'g', yes: [{ f: 'bob', g: 'alice' }], no: [{ f: 'bob', g: 'bob' }] },
};

describe('modifiers', () => {
  for (const [name, c] of Object.entries(TABLE)) {
    it(`${name}: matches its positive events and not its negative ones`, () => {
      const rule = fieldRule(c.key, c.value);
      for (const attrs of c.yes) assert.equal(matches(rule, attrs), true, `${c.key} should match ${JSON.stringify(attrs)}`);
      for (const attrs of c.no) assert.equal(matches(rule, attrs), false, `${c.key} should not match ${JSON.stringify(attrs)}`);
    });
  }

  it('covers every modifier of the table in this file or in the refusals below', () => {
    const exercised = new Set(Object.values(TABLE).flatMap((c) => c.key.split('|').slice(1)));
    const refused = ['expand', 'minute', 'hour', 'day', 'week', 'month', 'year', 'utf16le'];
    for (const name of Object.keys(MODIFIERS)) assert.ok(exercised.has(name) || refused.includes(name), `modifier ${name} untested`);
  });

  it('refuses unsupported modifiers with a reason instead of never matching', () => {
    assert.match(fieldRuleError('f|expand', '%servers%'), /'expand' is not supported/);
    assert.match(fieldRuleError('f|hour', 3), /'hour' is not supported/);
    assert.match(fieldRuleError('f|utf16le', 'cmd'), /only supported before 'base64'/);
    assert.match(fieldRuleError('f|utf16be|contains', 'cmd'), /only supported before 'base64'/);
    assert.match(fieldRuleError('f|base64|windash', 'x'), /'windash' cannot be combined with 'base64'/);
  });

  it('refuses contradictory chains and bad values', () => {
    assert.match(fieldRuleError('f|contains|startswith', 'x'), /'startswith' cannot follow 'contains'/);
    assert.match(fieldRuleError('f|cidr', '10.0.0.0/33'), /invalid prefix length/);
    assert.match(fieldRuleError('f|cidr', 'ten'), /not an IPv4 or IPv6 network/);
    assert.match(fieldRuleError('f|re', '(unclosed'), /regular expression '\(unclosed' cannot be used: .*Unterminated group/);
    assert.match(fieldRuleError('f|re', 'a(?i)b'), /inline flags '\(\?i\)' are supported only at the start/);
    assert.match(fieldRuleError('f|re', '(?>a)'), /atomic group/);
    assert.match(fieldRuleError('f|i', 'x'), /sub-modifier of 're'/);
    assert.match(fieldRuleError('f|gt', 'many'), /'gt' needs a number/);
    assert.match(fieldRuleError('f|exists', 'yes'), /'exists' needs true or false/);
    assert.match(fieldRuleError('f|re|contains', 'x'), /'contains' cannot be combined with 're'/);
    assert.match(fieldRuleError('f', ['a', null]), /null must be the only value/);
    assert.match(fieldRuleError('f', { nested: 1 }), /values must be strings/);
  });

  it('plans chains through the lookup table', () => {
    assert.deepEqual(planModifiers(['contains', 'all', 'windash']), { all: true, cased: false, windash: true, neq: false, regexFlags: '', position: 'contains' });
    assert.equal(planModifiers(['nope']), `unknown modifier 'nope'`);
    assert.equal(planModifiers(['toString']), `unknown modifier 'toString'`);
  });
});

describe('wildcards and escapes', () => {
  const cases: Array<[pattern: string, yes: string[], no: string[]]> = [
    ['a*c', ['ac', 'abbbc', 'A-C'], ['ab', 'acb']],
    ['a?c', ['abc'], ['ac', 'abbc']],
    ['*', ['', 'anything'], []],
    ['a\\*b', ['a*b'], ['axb', 'a\\*b']],
    ['a\\?b', ['a?b'], ['axb']],
    ['a\\\\*', ['a\\', 'a\\xyz'], ['axyz']],
    ['a\\\\\\*', ['a\\*'], ['a\\x', 'a\\']],
    ['C:\\Windows\\System32', ['c:\\windows\\system32'], ['C:/Windows/System32']],
    ['*.onion', ['x.onion', '.onion'], ['x.onion.example']],
    ['x*y*x', ['xyx', 'xayaxbx'], ['xy', 'xyxy']],
  ];
  for (const [pattern, yes, no] of cases) {
    it(`'${pattern}' matches ${JSON.stringify(yes)} and not ${JSON.stringify(no)}`, () => {
      const rule = fieldRule('f', pattern);
      for (const s of yes) assert.equal(matches(rule, { f: s }), true, `${pattern} vs ${s}`);
      for (const s of no) assert.equal(matches(rule, { f: s }), false, `${pattern} vs ${s}`);
    });
  }

  it('matches many-star patterns against long hostile text in linear time', () => {
    const rule = fieldRule('f|contains', 'a*a*a*a*a*a*b');
    const text = 'a'.repeat(200_000);
    const start = process.hrtime.bigint();
    assert.equal(matches(rule, { f: text }), false);
    assert.ok(process.hrtime.bigint() - start < 1_000_000_000n, 'took over a second');
  });
});
