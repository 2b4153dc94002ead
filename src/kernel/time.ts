/**
 * Timestamp parsing with integer arithmetic in each source's own unit. Every parser returns
 * nanoseconds since the epoch as a bigint (or undefined when the input is not a valid time), and
 * `isoFromNanos` renders the one canonical form Vigil stores: UTC, `Z`, with as many fraction
 * digits (0, 3, 6 or 9) as needed to keep the precision the source had.
 */

const NS_PER_MS = 1_000_000n;
const NS_PER_S = 1_000_000_000n;
/** Years 0001..9999 only: beyond that ISO 8601 needs an expanded form no consumer reads. */
const MIN_NS = -62135596800n * NS_PER_S;
const MAX_NS = 253402300799999999999n;

function inRange(ns: bigint): bigint | undefined {
  return ns >= MIN_NS && ns <= MAX_NS ? ns : undefined;
}

/** Renders epoch nanoseconds as RFC 3339 UTC, trimming trailing zero groups of the fraction. */
export function isoFromNanos(ns: bigint): string {
  let s = ns / NS_PER_S;
  let frac = ns % NS_PER_S;
  if (frac < 0n) {
    frac += NS_PER_S;
    s -= 1n;
  }
  const base = new Date(Number(s) * 1000).toISOString().slice(0, 19);
  if (frac === 0n) return `${base}Z`;
  let digits = frac.toString().padStart(9, '0');
  if (digits.endsWith('000000')) digits = digits.slice(0, 3);
  else if (digits.endsWith('000')) digits = digits.slice(0, 6);
  return `${base}.${digits}Z`;
}

/** The last answer of nanosFromIso: a batch repeats the same times (every event's `ingestedAt`). */
let last: { text: string; max: number; nanos: bigint | undefined } = { text: '', max: -1, nanos: undefined };

/** Epoch nanoseconds of an ISO date-time string, or undefined; rejects what does not match RFC 3339. */
export function nanosFromIso(text: string, maxFractionDigits = 9): bigint | undefined {
  if (text === last.text && maxFractionDigits === last.max) return last.nanos;
  const fast = canonicalIsoNanos(text, maxFractionDigits);
  const nanos = fast === null ? parseIsoNanos(text, maxFractionDigits) : fast;
  last = { text, max: maxFractionDigits, nanos };
  return nanos;
}

/**
 * The whole UTC seconds (`YYYY-MM-DDTHH:MM:SS`) `canonicalSecond` read lately and their epoch
 * nanoseconds (and milliseconds), the oldest replaced first. More than one: an event's `time` and `ingestedAt` take
 * turns, and with one second kept each would evict the other at every event.
 */
const SECONDS_KEPT = 4;
const keptSeconds: string[] = Array.from({ length: SECONDS_KEPT }, () => '');
const keptNanos: bigint[] = Array.from({ length: SECONDS_KEPT }, () => 0n);
/** The same seconds in epoch milliseconds (for `millisFromIso`, which then needs no bigint). */
const keptMillis: number[] = Array.from({ length: SECONDS_KEPT }, () => 0);
let oldestKept = 0;

/** The slot of the cache holding a whole UTC second `YYYY-MM-DDTHH:MM:SS`, or -1 when it is not one. */
function secondSlot(second: string): number {
  for (let i = 0; i < SECONDS_KEPT; i++) if (keptSeconds[i] === second) return i;
  const nanos = parseIsoNanos(`${second}Z`, 0);
  if (nanos === undefined) return -1;
  const slot = oldestKept;
  keptSeconds[slot] = second;
  keptNanos[slot] = nanos;
  keptMillis[slot] = Number(nanos / NS_PER_MS);
  oldestKept = (oldestKept + 1) % SECONDS_KEPT;
  return slot;
}

/** `canonicalSecond`'s answers besides a slot: not the canonical form, or more fraction digits than allowed. */
const NOT_CANONICAL = -1;
const TOO_PRECISE = -2;
/** The fraction, in nanoseconds, of the text `canonicalSecond` last read (a number: nothing is allocated per time). */
let canonicalFraction = 0;

/**
 * Reads the canonical form Vigil stores and most sources send (`YYYY-MM-DDTHH:MM:SS[.fraction]Z`)
 * by hand: events of a batch share their seconds, so a whole second is parsed once (by
 * `parseIsoNanos`, kept in the cache) and the fraction digit by digit. Answers the cache slot of
 * the second, with the fraction in `canonicalFraction`; NOT_CANONICAL for anything else, which the
 * general parser answers; TOO_PRECISE past `maxFractionDigits`.
 */
function canonicalSecond(text: string, maxFractionDigits: number): number {
  const n = text.length;
  if (
    !(n === 20 || (n >= 22 && n <= 30 && text.charCodeAt(19) === 46) /* . */) ||
    text.charCodeAt(n - 1) !== 90 /* Z */
  )
    return NOT_CANONICAL;
  if (n > 20 && n - 21 > maxFractionDigits) return TOO_PRECISE;
  const slot = secondSlot(text.slice(0, 19));
  if (slot < 0) return NOT_CANONICAL;
  let fraction = 0;
  for (let i = 20; i < n - 1; i++) {
    const digit = text.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return NOT_CANONICAL;
    fraction = fraction * 10 + digit;
  }
  for (let i = Math.max(n - 1, 20); i < 29; i++) fraction *= 10;
  canonicalFraction = fraction;
  return slot;
}

/**
 * The fast path of `nanosFromIso` (`canonicalSecond`): undefined past `maxFractionDigits`, null
 * for anything not canonical; a property test holds it equal to the general parser for any text.
 */
function canonicalIsoNanos(text: string, maxFractionDigits: number): bigint | undefined | null {
  const slot = canonicalSecond(text, maxFractionDigits);
  if (slot === TOO_PRECISE) return undefined;
  return slot < 0 ? null : inRange(keptNanos[slot]! + BigInt(canonicalFraction));
}

/**
 * The cache slot of a canonical time from 1970 on (its fraction in `canonicalFraction`), or -1:
 * the case the millisecond readers take without bigints (before 1970, `ns / n` cuts toward zero,
 * which `Math.floor` would not).
 */
function slotFrom1970(text: string): number {
  const slot = canonicalSecond(text, 9);
  return slot >= 0 && keptMillis[slot]! >= 0 ? slot : -1;
}

/**
 * Epoch milliseconds, to the microsecond, of an ISO date-time string (`Number(ns / 1000n) / 1000` of
 * `nanosFromIso(text)`), or undefined where that is undefined. The read side's event index reads
 * every event's time: the canonical form from 1970 on is read without bigints (`canonicalSecond`;
 * the microseconds cut as ns / 1000n cuts them); anything else through `nanosFromIso`. A property
 * test holds both equal.
 */
export function millisFromIso(text: string): number | undefined {
  const slot = slotFrom1970(text);
  if (slot >= 0) return (keptMillis[slot]! * 1000 + Math.floor(canonicalFraction / 1000)) / 1000;
  const ns = nanosFromIso(text);
  return ns === undefined ? undefined : Number(ns / 1000n) / 1000;
}

/**
 * Whether `nanosFromIso(text, maxFractionDigits)` is defined, without its bigints for the
 * canonical form: what the NormalizedEvent schema checks of every event's `time` and
 * `ingestedAt`. A second `canonicalSecond` reads is in range, and so is any fraction of it.
 */
export function isIsoDateTime(text: string, maxFractionDigits = 9): boolean {
  const slot = canonicalSecond(text, maxFractionDigits);
  if (slot >= 0) return true;
  return slot === NOT_CANONICAL && nanosFromIso(text, maxFractionDigits) !== undefined;
}

/** `nanosFromIso` by the RFC 3339 pattern alone (exported for the property test of the fast path). */
export function parseIsoNanos(text: string, maxFractionDigits: number): bigint | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})$/.exec(text);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, se, fr = '', zone] = m as unknown as string[];
  if (fr.length > maxFractionDigits) return undefined;
  const Y = Number(y),
    M = Number(mo),
    D = Number(d),
    H = Number(h),
    I = Number(mi),
    S = Number(se);
  if (M < 1 || M > 12 || D < 1 || D > daysInMonth(Y, M) || H > 23 || I > 59 || S > 59) return undefined;
  let offsetMin = 0;
  if (zone !== 'Z' && zone !== 'z') {
    const oh = Number(zone!.slice(1, 3)),
      om = Number(zone!.slice(4, 6));
    if (oh > 23 || om > 59) return undefined;
    offsetMin = (zone![0] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  // setUTCFullYear, because Date.UTC reads years 0..99 as 1900..1999.
  const date = new Date(Date.UTC(2000, 0, 1, H, I, S));
  date.setUTCFullYear(Y, M - 1, D);
  const seconds = BigInt(date.getTime() / 1000 - offsetMin * 60);
  const fraction = BigInt((fr + '000000000').slice(0, 9));
  return inRange(seconds * NS_PER_S + fraction);
}

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(y: number, m: number): number {
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  return m === 2 && leap ? 29 : MONTH_DAYS[m - 1]!;
}

/**
 * Epoch nanoseconds of a decimal seconds value, given as a JSON number or digit string
 * (`1591367999.305988`). The number is read through its shortest decimal text, so a float
 * with microsecond digits keeps exactly those digits.
 */
export function nanosFromEpochSeconds(value: number | string): bigint | undefined {
  const text = typeof value === 'number' ? numberText(value) : value;
  if (text === undefined) return undefined;
  const m = /^(-?)(\d{1,15})(?:\.(\d{1,9})\d*)?$/.exec(text);
  if (!m) return undefined;
  const sign = m[1] === '-' ? -1n : 1n;
  const ns = BigInt(m[2]!) * NS_PER_S + BigInt(((m[3] ?? '') + '000000000').slice(0, 9));
  return inRange(sign * ns);
}

/** Epoch nanoseconds of integer epoch milliseconds (number or digit string). */
export function nanosFromEpochMillis(value: number | string): bigint | undefined {
  return nanosFromIntegerUnit(value, NS_PER_MS);
}

/** Epoch nanoseconds of integer epoch microseconds (the journal's `__REALTIME_TIMESTAMP`). */
export function nanosFromEpochMicros(value: number | string): bigint | undefined {
  return nanosFromIntegerUnit(value, 1000n);
}

/** Epoch nanoseconds of an integer nanosecond count (OTLP `timeUnixNano`, a decimal string). */
export function nanosFromEpochNanos(value: number | string): bigint | undefined {
  return nanosFromIntegerUnit(value, 1n);
}

function nanosFromIntegerUnit(value: number | string, unit: bigint): bigint | undefined {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) return undefined;
    return inRange(BigInt(value) * unit);
  }
  if (!/^-?\d{1,21}$/.test(value)) return undefined;
  return inRange(BigInt(value) * unit);
}

/**
 * Whole epoch milliseconds of an ISO string for comparisons (ordering, windows), cut toward zero
 * (`Number(ns / 1_000_000n)`); undefined when invalid. Detection reads every event's time: the
 * canonical form from 1970 on is read without bigints, as `millisFromIso` reads it.
 */
export function epochMillisOf(iso: string): number | undefined {
  const slot = slotFrom1970(iso);
  if (slot >= 0) return keptMillis[slot]! + Math.floor(canonicalFraction / 1_000_000);
  const ns = nanosFromIso(iso);
  return ns === undefined ? undefined : Number(ns / NS_PER_MS);
}

function numberText(n: number): string | undefined {
  if (!Number.isFinite(n)) return undefined;
  const s = String(n);
  if (!/e/i.test(s)) return s;
  // Exponent form only for very large or very small magnitudes; toFixed gives plain digits.
  return Math.abs(n) < 1 ? n.toFixed(9) : undefined;
}
