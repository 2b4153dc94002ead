import { HUNT_LIMITS, type HuntExpr, type HuntParse } from './ast.js';
import { fail, HuntParseFailure, skipSpace, type Cursor } from './cursor.js';
import { parseOr } from './parse-filter.js';
import { parsePipes } from './parse-pipes.js';

function parseFilter(c: Cursor): HuntExpr {
  skipSpace(c);
  if (c.pos >= c.text.length || c.text[c.pos] === '|') return { kind: 'all' };
  const filter = parseOr(c);
  skipSpace(c);
  const ch = c.text[c.pos];
  if (ch !== undefined && ch !== '|') {
    const what = ch === ')' || ch === '}' ? `an unmatched '${ch}'` : `'${ch}'`;
    fail(c.pos, ['and', 'or', '|', 'end of query'], `expected 'and', 'or', '|' or the end of the query, found ${what}`);
  }
  return filter;
}

/** Parses a hunt (docs/hunting.md): the filter and its pipes, or an error with its position. Never throws. */
export function parseHunt(text: string): HuntParse {
  if (text.length > HUNT_LIMITS.textLength) {
    const message = `at ${HUNT_LIMITS.textLength}: a query is at most ${HUNT_LIMITS.textLength} characters`;
    return { ok: false, error: { position: HUNT_LIMITS.textLength, expected: ['end of query'], message } };
  }
  const c: Cursor = { text, pos: 0, depth: 0, terms: 0 };
  try {
    const filter = parseFilter(c);
    return { ok: true, query: { filter, pipes: parsePipes(c) } };
  } catch (e) {
    if (!(e instanceof HuntParseFailure)) throw e;
    return { ok: false, error: { position: e.position, expected: e.expected, message: e.message } };
  }
}
