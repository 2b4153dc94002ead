/** Opaque paging cursors: base64url JSON, so clients cannot depend on their inside. */
export function encodeCursor(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** Decodes a cursor; undefined when it is not one of ours. */
export function decodeCursor<T>(cursor: string): T | undefined {
  if (cursor.length > 2048 || !/^[A-Za-z0-9_-]*$/.test(cursor)) return undefined;
  try {
    return JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as T;
  } catch {
    return undefined;
  }
}
