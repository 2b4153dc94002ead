/** A fenced code block of a Markdown file: its info string, its text, and where it sits. */
export interface FencedBlock {
  readonly lang: string;
  readonly text: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** Offsets of the opening fence and just past the closing one, for rewriting the block. */
  readonly start: number;
  readonly end: number;
  /** The nearest heading above the block. */
  readonly heading: string;
  /** The prose between the previous block (or heading) and this one. */
  readonly before: string;
}

/** Every fenced block of `markdown` (fences at the start of a line, with or without indentation), in order. */
export function fencedBlocks(markdown: string): FencedBlock[] {
  const out: FencedBlock[] = [];
  const fence = /^([ \t]*)```([^\n`]*)\n([\s\S]*?)^\1```[ \t]*$/gm;
  let heading = '';
  let last = 0;
  for (const m of markdown.matchAll(fence)) {
    const between = markdown.slice(last, m.index);
    for (const h of between.matchAll(/^#{1,6} +(.+)$/gm)) heading = h[1]!.trim();
    out.push({
      lang: m[2]!.trim(),
      text: m[3]!,
      line: markdown.slice(0, m.index).split('\n').length,
      start: m.index,
      end: m.index + m[0].length,
      heading,
      before: between,
    });
    last = m.index + m[0].length;
  }
  return out;
}

/** The shape of a JSON value: its type, an object's keys with their shapes, an array by its first element. */
export function shapeOf(value: unknown): unknown {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length === 0 ? [] : [shapeOf(value[0])];
  if (typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([k, v]) => [k, shapeOf(v)]),
    );
  return typeof value;
}
