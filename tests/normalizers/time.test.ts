import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  epochMillisOf, isIsoDateTime, isoFromNanos, millisFromIso, nanosFromEpochMicros, nanosFromEpochMillis, nanosFromEpochNanos, nanosFromEpochSeconds, nanosFromIso, parseIsoNanos,
} from '../../src/kernel/time.js';

describe('time', () => {
  it('keeps the microseconds of a Zeek epoch float', () => {
    assert.equal(isoFromNanos(nanosFromEpochSeconds(1591367999.305988)!), '2020-06-05T14:39:59.305988Z');
    assert.equal(isoFromNanos(nanosFromEpochSeconds(1591367999)!), '2020-06-05T14:39:59Z');
  });
  it('reads OTLP nanoseconds in a string without float loss', () => {
    assert.equal(isoFromNanos(nanosFromEpochNanos('1544712660300000001')!), '2018-12-13T14:51:00.300000001Z');
  });
  it('reads journal microseconds and epoch milliseconds', () => {
    assert.equal(isoFromNanos(nanosFromEpochMicros('1700000000123456')!), '2023-11-14T22:13:20.123456Z');
    assert.equal(isoFromNanos(nanosFromEpochMillis(1700000000123)!), '2023-11-14T22:13:20.123Z');
  });
  it('applies offsets and rejects impossible dates', () => {
    assert.equal(isoFromNanos(nanosFromIso('2003-10-11T22:14:15.003-07:00')!), '2003-10-12T05:14:15.003Z');
    assert.equal(nanosFromIso('2003-02-30T00:00:00Z'), undefined);
    assert.equal(nanosFromIso('2003-10-11T22:14:15.0000003Z', 6), undefined);
    assert.equal(nanosFromIso('2003-10-11 22:14:15Z'), undefined);
    assert.equal(isoFromNanos(nanosFromIso('0050-01-01T00:00:00Z')!), '0050-01-01T00:00:00Z');
    assert.equal(nanosFromIso('0100-02-29T00:00:00Z'), undefined);
  });
  it('reads any text as the RFC 3339 pattern does, through its fast path for canonical times, in any order', () => {
    const nanosArb = fc.bigInt({ min: -62135596800n * 1_000_000_000n, max: 253402300799999999999n });
    const textArb = fc.oneof(
      nanosArb.map(isoFromNanos),
      // Canonical times with their fraction cut or padded to any length, another zone, a lowercase T or Z, a stray character.
      fc.tuple(nanosArb.map(isoFromNanos), fc.integer({ min: 0, max: 11 }), fc.constantFrom('Z', 'z', '+00:00', '-01:30', '')).map(([iso, digits, zone]) => {
        const [whole, fraction = ''] = iso.slice(0, -1).split('.');
        return `${whole}${digits === 0 ? '' : `.${fraction.padEnd(digits, '7').slice(0, digits)}`}${zone}`;
      }),
      fc.tuple(nanosArb.map(isoFromNanos), fc.nat(), fc.string({ maxLength: 1 })).map(([iso, at, c]) => iso.slice(0, at % iso.length) + c + iso.slice((at % iso.length) + 1)),
      fc.string({ maxLength: 32 }),
    );
    fc.assert(fc.property(fc.array(fc.tuple(textArb, fc.integer({ min: 0, max: 9 })), { minLength: 1, maxLength: 20 }), (texts) => {
      for (const [text, digits] of texts) assert.equal(nanosFromIso(text, digits), parseIsoNanos(text, digits), `${text} (${digits} digits)`);
    }), { numRuns: 2000 });
  });
  it('reads times taking turns between a few seconds (each event\'s time and ingestedAt) as the pattern does', () => {
    const secondArb = fc.bigInt({ min: -62135596800n, max: 253402300799n }).map((s) => isoFromNanos(s * 1_000_000_000n).slice(0, 19));
    fc.assert(fc.property(fc.array(secondArb, { minLength: 1, maxLength: 7 }), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 999_999_999 })), { minLength: 1, maxLength: 40 }), (seconds, picks) => {
      for (const [at, fraction] of picks) {
        const text = `${seconds[at % seconds.length]!}.${String(fraction).padStart(9, '0')}Z`;
        assert.equal(nanosFromIso(text), parseIsoNanos(text, 9), text);
      }
    }), { numRuns: 1000 });
  });
  it('reads epoch milliseconds (to the microsecond, and whole) and validity as the nanoseconds say, canonical or not (property)', () => {
    const nanosArb = fc.bigInt({ min: -62135596800n * 1_000_000_000n, max: 253402300799999999999n });
    const textArb = fc.oneof(
      nanosArb.map(isoFromNanos),
      fc.bigInt({ min: 0n, max: 4102444800n * 1_000_000_000n }).map(isoFromNanos),
      // Canonical times with their fraction cut or padded to any length, another zone, a stray character.
      fc.tuple(nanosArb.map(isoFromNanos), fc.integer({ min: 0, max: 11 }), fc.constantFrom('Z', 'z', '+00:00', '')).map(([iso, digits, zone]) => {
        const [whole, fraction = ''] = iso.slice(0, -1).split('.');
        return `${whole}${digits === 0 ? '' : `.${fraction.padEnd(digits, '7').slice(0, digits)}`}${zone}`;
      }),
      fc.tuple(nanosArb.map(isoFromNanos), fc.nat(), fc.string({ maxLength: 1 })).map(([iso, at, c]) => iso.slice(0, at % iso.length) + c + iso.slice((at % iso.length) + 1)),
      fc.string({ maxLength: 32 }),
    );
    fc.assert(fc.property(fc.array(textArb, { minLength: 1, maxLength: 20 }), (texts) => {
      for (const text of texts) {
        const ns = nanosFromIso(text);
        assert.equal(millisFromIso(text), ns === undefined ? undefined : Number(ns / 1000n) / 1000, text);
        assert.equal(epochMillisOf(text), ns === undefined ? undefined : Number(ns / 1_000_000n), text);
        for (const digits of [9, 6, 3, 0]) assert.equal(isIsoDateTime(text, digits), nanosFromIso(text, digits) !== undefined, `${text} (${digits} digits)`);
      }
    }), { numRuns: 3000 });
    assert.equal(millisFromIso('2026-11-22T00:00:00.0071239Z'), 1795305600007.123);
    assert.equal(millisFromIso('1970-01-01T00:00:00Z'), 0);
    assert.equal(millisFromIso('1969-12-31T23:59:59.9999995Z'), 0, 'cut toward zero, as the bigint division cuts');
  });
  it('round-trips any in-range nanosecond instant', () => {
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: 253402300799999999999n }), (ns) => {
      assert.equal(nanosFromIso(isoFromNanos(ns)), ns);
    }));
  });
});
