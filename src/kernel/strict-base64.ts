/** Standard base64 (RFC 4648 section 4) in its one canonical form: padded, no whitespace, zero pad bits. */
const SHAPE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Decodes canonical standard base64, or undefined. Node's decoder is lenient (it skips junk and
 * ignores non-zero pad bits), so the text must match the alphabet and re-encode to itself.
 */
export function decodeStrictBase64(text: string, maxBytes: number): Uint8Array | undefined {
  if (text.length > Math.ceil(maxBytes / 3) * 4 || !SHAPE.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? new Uint8Array(bytes) : undefined;
}

/** Encodes bytes as standard padded base64. */
export function encodeBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}
