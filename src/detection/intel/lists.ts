import { cut, IntelFormatError, normalizeCidr, normalizeIp, normalizeTerm } from './normalize.js';
import type { Indicator, IndicatorSet, IndicatorTerm, IndicatorType, UnsupportedIndicator } from './types.js';

/**
 * Plain indicator lists (issue 60): one value a line, or CSV with a header. Written as a loop over the text with
 * indexOf and per-character checks, no backtracking regular expression, so a 1,000,000-line list reads in about a
 * second (bench section `intel-readers`).
 */

/** How a list is read: its format, which CSV column holds the values, what every indicator of it declares. */
export interface ListOptions {
  /** `csv` needs a header line; `auto` (the default): CSV when the first line that is not a comment has a comma. */
  readonly format?: 'lines' | 'csv' | 'auto';
  /** The CSV column of the values (any case); default: `value`, `indicator`, `ioc`, the type's name, else the first. */
  readonly column?: string;
  readonly confidence?: number;
  readonly name?: string;
  /** Refuse a list of more lines than this (default 5,000,000). */
  readonly maxLines?: number;
}

/** The most refused lines listed one by one; the rest are counted in one last entry. */
export const MAX_LISTED_REFUSALS = 1000;

const HASH_BY_LENGTH: Record<number, IndicatorType> = { 32: 'md5', 40: 'sha1', 64: 'sha256' };

/**
 * The type `auto` gives a value, in this order: `://` makes a URL, `@` an e-mail address, `/` a CIDR range (a URL
 * when it is not one, `host/path`), an address an ipv4 or ipv6, 32, 40 or 64 hex digits an md5, sha1 or sha256,
 * anything else a domain name.
 */
export function guessIndicatorType(value: string): IndicatorType {
  if (value.includes('://')) return 'url';
  if (value.includes('@')) return 'email';
  if (value.includes('/')) return normalizeCidr(value) === undefined ? 'url' : 'cidr';
  let hex = true;
  let colon = false;
  let digitsAndDots = true;
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i) | 32;
    const digit = c >= 48 && c <= 57;
    if (!digit && !(c >= 97 && c <= 102)) hex = false;
    if (c === 58) colon = true;
    if (!digit && c !== 46) digitsAndDots = false;
  }
  if (colon || digitsAndDots) {
    const ip = normalizeIp(value);
    if (ip) return ip.type;
  }
  if (hex) return HASH_BY_LENGTH[value.length] ?? 'domain';
  return 'domain';
}

/** The term a value makes; an address list takes addresses and ranges alike, each as what it is. */
function termOf(type: IndicatorType, value: string): IndicatorTerm | undefined {
  if (type === 'ipv4' || type === 'ipv6' || type === 'cidr') {
    if (value.includes('/')) {
      const cidr = normalizeCidr(value);
      return cidr === undefined ? undefined : { type: 'cidr', value: cidr };
    }
    return normalizeIp(value);
  }
  const normalized = normalizeTerm(type, value);
  return normalized === undefined ? undefined : { type, value: normalized };
}

/** Splits one CSV line (RFC 4180 quotes, `""` inside quotes), values trimmed. */
export function csvFields(line: string): string[] {
  const out: string[] = [];
  let i = 0;
  for (;;) {
    while (line.charCodeAt(i) === 32) i++;
    let field = '';
    if (line[i] === '"') {
      i++;
      for (;;) {
        const q = line.indexOf('"', i);
        if (q === -1) {
          field += line.slice(i);
          i = line.length;
          break;
        }
        field += line.slice(i, q);
        if (line[q + 1] === '"') {
          field += '"';
          i = q + 2;
        } else {
          i = q + 1;
          break;
        }
      }
      const comma = line.indexOf(',', i);
      i = comma === -1 ? line.length : comma;
    } else {
      const comma = line.indexOf(',', i);
      const end = comma === -1 ? line.length : comma;
      field = line.slice(i, end);
      i = end;
    }
    out.push(field.trim());
    if (i >= line.length) return out;
    i++;
  }
}

/** The value of one line in the lines format: blank and `#` lines are none, ` #...` after a value is a comment. */
function lineValue(line: string): string {
  let s = line.trim();
  if (s === '' || s.charCodeAt(0) === 35) return '';
  const hash = s.indexOf(' #');
  const tab = s.indexOf('\t#');
  const at = hash === -1 ? tab : tab === -1 ? hash : Math.min(hash, tab);
  if (at !== -1) s = s.slice(0, at).trim();
  return s;
}

function pickColumn(header: string[], type: IndicatorType | 'auto', column?: string): number {
  const names = header.map((h) => h.toLowerCase());
  const wanted = column ? [column.toLowerCase()] : ['value', 'indicator', 'ioc', ...(type === 'auto' ? [] : [type])];
  for (const w of wanted) {
    const at = names.indexOf(w);
    if (at !== -1) return at;
  }
  if (column) throw new IntelFormatError(`the CSV header has no column '${cut(column, 64)}'`);
  return 0;
}

/**
 * The indicators of a list of `type` (or `auto`, guessed per value by guessIndicatorType): one value a line (blank
 * lines and `#` comments skipped), or CSV whose header names the value column. Each indicator's id is
 * `list:<type>:<value>`; duplicates are merged. Values that are not of their type are listed as unsupported, the
 * first MAX_LISTED_REFUSALS one by one and the rest counted. Throws IntelFormatError past `maxLines` lines.
 */
export function readIndicatorList(text: string, type: IndicatorType | 'auto', options: ListOptions = {}): IndicatorSet {
  const maxLines = options.maxLines ?? 5_000_000;
  const common = {
    ...(options.confidence !== undefined ? { confidence: options.confidence } : {}),
    ...(options.name !== undefined ? { name: options.name } : {}),
  };
  const indicators: Indicator[] = [];
  const unsupported: UnsupportedIndicator[] = [];
  const seen = new Set<string>();
  let refused = 0;
  let csv: boolean | undefined = options.format === 'csv' ? true : options.format === 'lines' ? false : undefined;
  let column = -1;
  let lineNo = 0;
  for (let start = 0; start < text.length;) {
    const nl = text.indexOf('\n', start);
    const end = nl === -1 ? text.length : nl;
    const line = text.slice(start, end);
    start = end + 1;
    if (++lineNo > maxLines) throw new IntelFormatError(`the list holds more than ${maxLines} lines`);
    let value = lineValue(line);
    if (value === '') continue;
    if (csv === undefined) csv = value.includes(',');
    if (csv && column === -1) {
      column = pickColumn(csvFields(value), type, options.column);
      continue;
    }
    if (csv) value = csvFields(value)[column] ?? '';
    if (value === '') continue;
    const kind = type === 'auto' ? guessIndicatorType(value) : type;
    const term = termOf(kind, value);
    if (!term) {
      if (++refused <= MAX_LISTED_REFUSALS) {
        const reason = `line ${lineNo}: '${cut(value, 200)}' is not a valid ${kind}`;
        unsupported.push({ id: `list:line:${lineNo}`, source: cut(value), reason });
      }
      continue;
    }
    const id = `list:${term.type}:${term.value}`;
    if (seen.has(id)) continue;
    seen.add(id);
    indicators.push({ id, anyOf: [[term]], source: value, ...common });
  }
  if (refused > MAX_LISTED_REFUSALS) {
    const more = refused - MAX_LISTED_REFUSALS;
    unsupported.push({ id: 'list:more', source: '', reason: `${more} more lines refused, not listed one by one` });
  }
  return { indicators, unsupported };
}
