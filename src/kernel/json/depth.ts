/**
 * One nesting bound for every JSON value the service accepts, and walks that cannot overflow the
 * stack on values that are deeper anyway (records written before the bound, or by another tool).
 * Nothing here recurses: each walk keeps its own stack.
 */

/** Deepest nesting accepted at the edge: the outermost array or object is level 1. */
export const MAX_JSON_DEPTH = 64;

/** What a container nested past the bound becomes when a stored value is served or exported. */
export const TRUNCATED = `[nesting deeper than ${MAX_JSON_DEPTH} levels removed]`;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;

/**
 * The path (`records[0].attributes.a…`) of the first container nested past `max` in JSON text, for
 * the 400 that refuses it. Only called once a body is known to be too deep; a path longer than a
 * few hundred characters is shortened in the middle.
 */
export function tooDeepPath(text: string, max = MAX_JSON_DEPTH): string {
  const frames: Array<{ array: boolean; index: number; key: string }> = [];
  let key = '';
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      let end = i + 1;
      while (end < text.length && text.charCodeAt(end) !== QUOTE) end += text.charCodeAt(end) === BACKSLASH ? 2 : 1;
      key = text.slice(i + 1, end);
      i = end;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (frames.length === max) break;
      frames.push({ array: c === OPEN_ARRAY, index: 0, key: '' });
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) frames.pop();
    else if (c === 0x2c) {
      const top = frames[frames.length - 1];
      if (top?.array) top.index++;
    } else if (c === 0x3a) {
      const top = frames[frames.length - 1];
      if (top) top.key = key;
    }
  }
  let path = '';
  for (let f = 0; f < frames.length - 1; f++) {
    const frame = frames[f]!;
    path += frame.array
      ? `[${frame.index}]`
      : /^[A-Za-z_$][\w$]*$/.test(frame.key)
        ? `${path ? '.' : ''}${frame.key}`
        : `[${JSON.stringify(frame.key)}]`;
  }
  const top = frames[frames.length - 1];
  if (top)
    path += top.array
      ? `[${top.index}]`
      : /^[A-Za-z_$][\w$]*$/.test(top.key)
        ? `${path ? '.' : ''}${top.key}`
        : `[${JSON.stringify(top.key)}]`;
  if (path.length > 240) path = `${path.slice(0, 120)}…${path.slice(-100)}`;
  return path || '(body)';
}

function isContainer(value: unknown): value is Record<string, unknown> | unknown[] {
  return typeof value === 'object' && value !== null;
}

/**
 * Whether a parsed value nests at most `max` levels. Iterative, and allocation-free but for its
 * stack: the edge runs it over every JSON body (src/http/body.ts), where a batch of 1,000 events
 * takes about 0.16 ms.
 */
export function withinDepth(value: unknown, max = MAX_JSON_DEPTH): boolean {
  if (!isContainer(value)) return true;
  const nodes: Array<Record<string, unknown> | unknown[]> = [value];
  const depths: number[] = [1];
  while (nodes.length > 0) {
    const node = nodes.pop()!;
    const depth = depths.pop()!;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const child: unknown = node[i];
        if (!isContainer(child)) continue;
        if (depth >= max) return false;
        nodes.push(child);
        depths.push(depth + 1);
      }
    } else {
      // Parsed JSON holds only own enumerable properties; a `__proto__` key is one of them.
      for (const key in node) {
        const child = node[key];
        if (!isContainer(child)) continue;
        if (depth >= max) return false;
        nodes.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return true;
}

function setOwn(target: Record<string, unknown> | unknown[], key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else (target as Record<string, unknown>)[key] = value;
}

/**
 * The value unchanged when it nests at most `max` levels; otherwise a copy in which every
 * container past the bound is replaced by {@link TRUNCATED}. Used where stored values leave the
 * service (reads, export), so a record from an old log can never take a read down.
 */
export function clampDepth(value: unknown, max = MAX_JSON_DEPTH): unknown {
  if (!isContainer(value) || withinDepth(value, max)) return value;
  const root: Record<string, unknown> | unknown[] = Array.isArray(value) ? [] : {};
  const stack: Array<[Record<string, unknown> | unknown[], Record<string, unknown> | unknown[], number]> = [
    [value, root, 1],
  ];
  while (stack.length > 0) {
    const [from, to, depth] = stack.pop()!;
    for (const [key, child] of Object.entries(from)) {
      if (!isContainer(child)) setOwn(to, key, child);
      else if (depth + 1 > max) setOwn(to, key, TRUNCATED);
      else {
        const copy: Record<string, unknown> | unknown[] = Array.isArray(child) ? [] : {};
        setOwn(to, key, copy);
        stack.push([child, copy, depth + 1]);
      }
    }
  }
  return root;
}

/**
 * `JSON.stringify` that cannot fail on depth: the engine's serializer recurses and throws a
 * RangeError on a few thousand levels, so a value it refuses is clamped first.
 */
export function stringifyBounded(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    return JSON.stringify(clampDepth(value));
  }
}
