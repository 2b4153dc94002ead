/** A C2SP tlog-checkpoint body (https://c2sp.org/tlog-checkpoint): origin, tree size, root hash. */
export interface Checkpoint {
  readonly origin: string;
  readonly size: number;
  readonly root: Uint8Array;
}

/** The checkpoint's note text: `<origin>\n<size>\n<base64 root>\n`. */
export function formatCheckpoint(c: Checkpoint): string {
  return `${c.origin}\n${c.size}\n${Buffer.from(c.root).toString('base64')}\n`;
}

/** Parses a checkpoint's note text (extension lines are allowed and ignored), or says what is wrong. */
export function parseCheckpoint(text: string): { ok: true; checkpoint: Checkpoint } | { ok: false; error: string } {
  const lines = text.split('\n');
  if (lines.length < 4 || lines.at(-1) !== '')
    return { ok: false, error: 'a checkpoint has an origin, a size and a root hash line' };
  const [origin, size, root] = lines as [string, string, string];
  if (origin.length === 0) return { ok: false, error: 'empty origin' };
  if (!/^(0|[1-9]\d{0,15})$/.test(size) || !Number.isSafeInteger(Number(size)))
    return { ok: false, error: 'tree size is not a decimal integer' };
  const hash = Buffer.from(root, 'base64');
  if (hash.byteLength !== 32 || hash.toString('base64') !== root)
    return { ok: false, error: 'root hash is not base64 of 32 bytes' };
  return { ok: true, checkpoint: { origin, size: Number(size), root: new Uint8Array(hash) } };
}
