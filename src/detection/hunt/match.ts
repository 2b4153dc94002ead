import { compilePattern } from '../wildcard.js';
import { INDEX_FIELDS, type HuntExpr } from './ast.js';
import { leavesAt, rawValuesAt, walkLeaves } from './resolve.js';
import { freeTextTest, rangeTest, valueTest, type LeafTest } from './value-test.js';

/** Tests an event, or under a nested query one object of it. */
export type RootTest = (root: unknown) => boolean;

const INDEXED = new Set<string>(INDEX_FIELDS);

/** Whether `field` (at the top level, not inside `{}`) is an index field, compared case-sensitively. */
const isCased = (field: string, nested: boolean): boolean => !nested && INDEXED.has(field);

/** A field's leaves tested: by path, or over every path a wildcard field name matches. */
function onField(field: string, test: LeafTest): RootTest {
  if (field.includes('*')) {
    const pathTest = compilePattern(
      field
        .split('*')
        .flatMap((text, i) => [
          ...(i > 0 ? [{ kind: 'any' as const }] : []),
          ...(text ? [{ kind: 'text' as const, text }] : []),
        ]),
      true,
    );
    return (root) => walkLeaves(root, (path, leaf) => pathTest(path) && test(leaf));
  }
  const segs = field.split('.');
  return (root) => {
    for (const leaf of leavesAt(root, segs)) if (test(leaf)) return true;
    return false;
  };
}

function exists(field: string): RootTest {
  if (field.includes('*')) return onField(field, (leaf) => leaf !== null);
  const segs = field.split('.');
  return (root) => rawValuesAt(root, segs).some((v) => v !== null && v !== undefined);
}

function nested(field: string, inner: RootTest): RootTest {
  const segs = field.split('.');
  return (root) => {
    for (const leaf of leavesAt(root, segs))
      if (leaf !== null && typeof leaf === 'object' && !Array.isArray(leaf) && inner(leaf)) return true;
    return false;
  };
}

function all(tests: RootTest[]): RootTest {
  return (root) => {
    for (const t of tests) if (!t(root)) return false;
    return true;
  };
}

function some(tests: RootTest[]): RootTest {
  return (root) => {
    for (const t of tests) if (t(root)) return true;
    return false;
  };
}

/** Compiles a filter into a test of the event (or, `nested`, of one object under a `{}` query). */
export function compileFilter(e: HuntExpr, nestedQuery = false): RootTest {
  switch (e.kind) {
    case 'all':
      return () => true;
    case 'and':
      return all(e.items.map((i) => compileFilter(i, nestedQuery)));
    case 'or':
      return some(e.items.map((i) => compileFilter(i, nestedQuery)));
    case 'not': {
      const inner = compileFilter(e.item, nestedQuery);
      return (root) => !inner(root);
    }
    case 'match': {
      if (e.field === null) {
        const test = freeTextTest(e.value);
        return (root) => walkLeaves(root, (_path, leaf) => test(leaf));
      }
      return onField(e.field, valueTest(e.value, isCased(e.field, nestedQuery)));
    }
    case 'exists':
      return exists(e.field);
    case 'range':
      return onField(e.field, rangeTest(e.op, e.value, isCased(e.field, nestedQuery)));
    case 'nested':
      return nested(e.field, compileFilter(e.query, true));
    default:
      return e satisfies never;
  }
}
