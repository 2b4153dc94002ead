import { CST, Lexer, LineCounter, parseAllDocuments, type Document } from 'yaml';

/** Bounds on a Sigma upload: text size, documents, nesting, and YAML alias expansion (anchor bombs). */
export const SIGMA_TEXT_LIMITS = {
  bytes: 1024 * 1024,
  documents: 1000,
  nesting: 64,
  aliases: 50,
  mergeDepth: 32,
} as const;

/** Where a rule document sits in the text: its first line, and the line of a key path inside it. */
export interface DocumentOrigin {
  readonly line: number;
  locate(path: readonly string[]): number | undefined;
}

/**
 * What `parseSigmaText` answers: the rule documents (collections applied), each with its origin in
 * the text (`origins[i]` is where `docs[i]` was written), or why the text is refused.
 */
export type SigmaTextResult = { ok: true; docs: unknown[]; origins?: DocumentOrigin[] } | { ok: false; error: string };

type Mapping = Record<string, unknown>;

function isMap(value: unknown): value is Mapping {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Sigma 1.0 collection merge: nested maps merge, anything else in `over` replaces what `base` had. */
function deepMerge(base: Mapping, over: Mapping, depth = 0): Mapping {
  const out: Mapping = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    out[key] =
      isMap(current) && isMap(value) && depth < SIGMA_TEXT_LIMITS.mergeDepth
        ? deepMerge(current, value, depth + 1)
        : value;
  }
  return out;
}

/**
 * Applies Sigma rule-collection actions (spec 1.0 "Rule collections"): `action: global` sets a template
 * merged into each following document, `action: reset` clears it, `action: repeat` emits the previous
 * rule again with this document's changes. Action documents are not rules themselves.
 */
export function applyCollectionActions(docs: readonly unknown[], origins?: readonly DocumentOrigin[]): SigmaTextResult {
  let template: Mapping | undefined;
  let previous: Mapping | undefined;
  const out: unknown[] = [];
  const from: DocumentOrigin[] = [];
  for (const [index, doc] of docs.entries()) {
    const origin = origins?.[index];
    if (!isMap(doc) || doc['action'] === undefined) {
      const rule = isMap(doc) && template ? deepMerge(template, doc) : doc;
      out.push(rule);
      if (origin) from.push(origin);
      previous = isMap(rule) ? rule : undefined;
      continue;
    }
    const { action, ...rest } = doc;
    if (action === 'global') template = rest;
    else if (action === 'reset') template = undefined;
    else if (action === 'repeat') {
      if (!previous)
        return { ok: false, error: `document ${index + 1}: 'action: repeat' has no previous rule to repeat` };
      previous = deepMerge(previous, rest);
      out.push(previous);
      if (origin) from.push(origin);
    } else {
      const name = typeof action === 'string' ? action : typeof action;
      return {
        ok: false,
        error: `document ${index + 1}: unknown collection action '${name}' (supported: global, reset, repeat)`,
      };
    }
  }
  return origins ? { ok: true, docs: out, origins: from } : { ok: true, docs: out };
}

function isTree(value: unknown): boolean {
  try {
    JSON.stringify(value);
    return true;
  } catch {
    return false;
  }
}

function firstLine(message: string): string {
  const line = message.split('\n', 1)[0] ?? message;
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

function originOf(doc: Document, lines: LineCounter): DocumentOrigin {
  const start = (doc.contents as { range?: [number, number, number] } | null)?.range?.[0] ?? doc.range?.[0] ?? 0;
  return {
    line: lines.linePos(start).line,
    locate(path) {
      const node = doc.getIn(path, true) as { range?: [number, number, number] } | undefined;
      const parent =
        path.length > 0
          ? (doc.getIn(path.slice(0, -1), true) as
              { items?: Array<{ key?: { value?: unknown; range?: [number, number, number] } }> } | undefined)
          : undefined;
      // The key's line names the entry (`selection:`) better than its value's first line.
      const key = parent?.items?.find((p) => p.key?.value === path[path.length - 1])?.key;
      const offset = key?.range?.[0] ?? node?.range?.[0];
      return offset === undefined ? undefined : lines.linePos(offset).line;
    },
  };
}

/**
 * The first line at which the text nests deeper than `limit` collections, or undefined. The yaml
 * package's parser and composer recurse per level and slow down with depth: a 1 MiB text of
 * `[[[[…` or `- - - …` held the thread for 1–3 s before it overflowed its stack. This walks the
 * lexer's tokens (flat and linear) instead, and never counts lower than the real nesting: block
 * collections nest by column, so it keeps the columns of the block content still open (each line's
 * indentation, and the content after each `-` or `?`, as the content after `- - ` sits at the
 * columns of two more levels, and a line that starts with `-` may open a sequence at its parent's
 * column), and adds the flow collections (`[`, `{`) open. A Sigma rule nests less than ten levels.
 */
export function nestingPastLimit(text: string, limit: number): number | undefined {
  const open: number[] = [];
  const openAt = (column: number) => {
    if (open.length === 0 || open[open.length - 1]! < column) open.push(column);
  };
  let flow = 0;
  let line = 1;
  let column = 0;
  let lineStart = true;
  let afterIndicator = false;
  let scalarNext = false;
  let blockScalar = false;
  for (const token of new Lexer().lex(text)) {
    const type = scalarNext ? 'scalar-value' : CST.tokenType(token);
    scalarNext = token === CST.SCALAR;
    if (lineStart) {
      lineStart = false;
      column = 0;
      // Inside a flow collection, lines carry no structure: the brackets count.
      if (flow === 0) {
        const indent = type === 'space' ? token.length : 0;
        while (open.length > 0 && open[open.length - 1]! > indent) open.pop();
        openAt(indent);
      }
    }
    // A block sequence may sit at its parent key's column (`k:` then `- a` below it): a line that
    // starts with `-` or `?` opens a level between that column and its content's.
    if (column === open[open.length - 1] && flow === 0 && (type === 'seq-item-ind' || type === 'explicit-key-ind'))
      open.push(column + 0.5);
    if (afterIndicator && type !== 'space' && type !== 'newline' && type !== 'comment') {
      openAt(column);
      afterIndicator = false;
    }
    if (type === 'flow-map-start' || type === 'flow-seq-start') flow++;
    else if (type === 'flow-map-end' || type === 'flow-seq-end') flow = Math.max(0, flow - 1);
    else if (
      flow === 0 &&
      (type === 'seq-item-ind' ||
        type === 'explicit-key-ind' ||
        (type === 'map-value-ind' && column === open[open.length - 1]))
    )
      afterIndicator = true;
    if (open.length + flow > limit) return line;
    // The lexer's markers (a scalar follows, document mode) take no room in the text.
    if (!(token.length === 1 && token < ' ' && token !== '\n' && token !== '\t')) column += token.length;
    for (let i = token.indexOf('\n'); i !== -1; i = token.indexOf('\n', i + 1)) line++;
    // A block scalar's lines (after `|` or `>`) come as one token, after the header's line break.
    if (type === 'block-scalar-header') blockScalar = true;
    else if (type === 'scalar-value') blockScalar = false;
    if ((type === 'newline' && !blockScalar) || (type === 'scalar-value' && token.endsWith('\n'))) {
      lineStart = true;
      afterIndicator = false;
    }
  }
  return undefined;
}

function parseDocuments(text: string): SigmaTextResult & { origins?: DocumentOrigin[] } {
  const deep = nestingPastLimit(text, SIGMA_TEXT_LIMITS.nesting);
  if (deep !== undefined)
    return { ok: false, error: `YAML (line ${deep}): nested deeper than ${SIGMA_TEXT_LIMITS.nesting} levels` };
  const lines = new LineCounter();
  const parsed = parseAllDocuments(text, {
    uniqueKeys: true,
    prettyErrors: true,
    logLevel: 'silent',
    lineCounter: lines,
  });
  if (!Array.isArray(parsed)) return { ok: true, docs: [], origins: [] };
  if (parsed.length > SIGMA_TEXT_LIMITS.documents)
    return { ok: false, error: `more than ${SIGMA_TEXT_LIMITS.documents} YAML documents` };
  const docs: unknown[] = [];
  const origins: DocumentOrigin[] = [];
  for (const [index, doc] of parsed.entries()) {
    const error = doc.errors[0];
    if (error)
      return {
        ok: false,
        error:
          `YAML document ${index + 1}${error.linePos ? ` (line ${error.linePos[0].line})` : ''}: ` +
          `${firstLine(error.message)}`,
      };
    const value: unknown = doc.toJS({ maxAliasCount: SIGMA_TEXT_LIMITS.aliases });
    // An alias inside its own anchor (`a: &x {b: *x}`) builds a cycle, which no rule needs.
    if (!isTree(value))
      return { ok: false, error: `YAML document ${index + 1}: an alias refers to its own anchor (recursive data)` };
    // An empty document (a stray `---`) holds no rule.
    if (value !== null && value !== undefined) {
      docs.push(value);
      origins.push(originOf(doc, lines));
    }
  }
  return { ok: true, docs, origins };
}

/**
 * The line a compile error points at: the key its path names (`detection.selection: ...`), else the document's first
 * line.
 */
export function errorLine(origin: DocumentOrigin, error: string): number {
  const message = error.replace(/^(rule "[^"]*"|rule \S+|untitled rule): /, '');
  const path = /^([A-Za-z_][\w-]*)(?:\.([^:\s]+))?:/.exec(message);
  if (path) {
    const keys = path[2] !== undefined ? [path[1]!, path[2]] : [path[1]!];
    return origin.locate(keys) ?? origin.locate([path[1]!]) ?? origin.line;
  }
  return origin.line;
}

/** Parses a Sigma YAML text (one or more documents, rule collections applied). Never throws. */
export function parseSigmaText(text: string): SigmaTextResult {
  if (Buffer.byteLength(text, 'utf8') > SIGMA_TEXT_LIMITS.bytes)
    return { ok: false, error: `Sigma text larger than ${SIGMA_TEXT_LIMITS.bytes} bytes` };
  let parsed: SigmaTextResult;
  try {
    parsed = parseDocuments(text);
  } catch (error) {
    // The yaml package throws for alias bombs (maxAliasCount) and can overflow on absurd nesting.
    return { ok: false, error: `YAML: ${firstLine(error instanceof Error ? error.message : String(error))}` };
  }
  return parsed.ok ? applyCollectionActions(parsed.docs, parsed.origins) : parsed;
}
