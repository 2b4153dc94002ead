import { leavesAt } from './resolve.js';

/** One cell of a result row. */
export type Cell = string | number | null;

/** Result rows with their column names. */
export interface Rows {
  columns: string[];
  rows: Cell[][];
}

/** A leaf as a cell: strings and numbers as they are, booleans as text, objects as JSON, absent as null. */
export function cellOf(leaf: unknown): Cell {
  if (typeof leaf === 'string') return leaf;
  if (typeof leaf === 'number') return Number.isFinite(leaf) ? leaf : null;
  if (typeof leaf === 'boolean') return leaf ? 'true' : 'false';
  if (leaf === null || leaf === undefined) return null;
  return JSON.stringify(leaf);
}

/** The distinct cells an event groups under for a field: each array element, null when absent. */
export function groupCells(event: unknown, segs: readonly string[]): Cell[] {
  const seen = new Map<string, Cell>();
  for (const leaf of leavesAt(event, segs)) {
    const cell = cellOf(leaf);
    seen.set(JSON.stringify(cell), cell);
  }
  return seen.size === 0 ? [null] : [...seen.values()];
}

const rank = (c: Cell): number => (c === null ? 0 : typeof c === 'number' ? 1 : 2);

/** Orders cells: null, then numbers ascending, then strings by code unit. */
export function compareCells(a: Cell, b: Cell): number {
  const r = rank(a) - rank(b);
  if (r !== 0) return r;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  return a === b ? 0 : (a as string) < (b as string) ? -1 : 1;
}

/** Orders rows by the cells at `keys` ascending, first difference wins. */
export function compareKeys(a: readonly Cell[], b: readonly Cell[], keys: readonly number[]): number {
  for (const k of keys) {
    const d = compareCells(a[k]!, b[k]!);
    if (d !== 0) return d;
  }
  return 0;
}

/** Applies a `sort` pipe (stable over the default order) and a `head` pipe to finished rows. */
export function sortAndHead(
  result: Rows,
  sort: { field: string; descending: boolean } | undefined,
  head: number | undefined,
): Rows {
  let rows = result.rows;
  if (sort) {
    const i = result.columns.indexOf(sort.field);
    const sign = sort.descending ? -1 : 1;
    rows = rows
      .map((row, at) => ({ row, at }))
      .sort((x, y) => sign * compareCells(x.row[i]!, y.row[i]!) || x.at - y.at)
      .map((x) => x.row);
  }
  return { columns: result.columns, rows: head === undefined ? rows : rows.slice(0, head) };
}
