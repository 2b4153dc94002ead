/**
 * Decoding of `journalctl -o json` values: strings stay strings, arrays of bytes (sent for text that
 * is not printable UTF-8) become text, arrays of values (a field repeated in one entry) become arrays
 * of decoded values, and null (a value over journalctl's size threshold) stays null.
 */

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function isByte(v: unknown): boolean {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 255;
}

/** Whether a value is the journal's byte-array encoding (every element an integer 0..255). */
export function isByteArray(v: unknown): v is number[] {
  return Array.isArray(v) && v.every(isByte);
}

function escapeBytes(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) {
    // Printable ASCII, TAB and LF read as themselves; everything else, and the backslash, as \xNN.
    const plain = (b >= 0x20 && b <= 0x7e && b !== 0x5c) || b === 0x09 || b === 0x0a;
    out += plain ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`;
  }
  return out;
}

/** Text of a byte array: its UTF-8 decoding when valid, else printable ASCII with `\xNN` for other bytes. */
export function textFromBytes(values: readonly number[]): string {
  const bytes = Uint8Array.from(values);
  try {
    return UTF8.decode(bytes);
  } catch {
    return escapeBytes(bytes);
  }
}

/** One journal field value with byte arrays decoded, at the top level and inside a repeated field. */
export function decodeJournalValue(value: unknown): unknown {
  if (!Array.isArray(value)) return value;
  if (isByteArray(value)) return textFromBytes(value);
  return value.map((v) => (isByteArray(v) ? textFromBytes(v) : v));
}

/** A decoded value as one string: itself, or the first string of a repeated field; undefined otherwise. */
export function journalString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  // The journal writes numbers as strings; a hand-made entry with a plain number means the same.
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (Array.isArray(value)) return value.find((v): v is string => typeof v === 'string');
  return undefined;
}
