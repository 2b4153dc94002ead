import type { Child } from 'hono/jsx';
import { withQuery } from './url.js';

/** One column of a table: its header, its cell, and the sort key its header links to, if sortable. */
export interface Column<R> {
  readonly header: string;
  readonly cell: (row: R) => Child;
  readonly sort?: string;
  readonly class?: string;
}

/** How the table's sortable headers link: the page's path and query, and the current sort. */
export interface SortLinks {
  readonly path: string;
  readonly query: Readonly<Record<string, string | undefined>>;
  /** The current sort: a key, `-key` for descending. */
  readonly current?: string;
}

/** Props of a data table. */
export interface TableProps<R> {
  readonly caption?: string;
  readonly columns: readonly Column<R>[];
  readonly rows: readonly R[];
  readonly rowKey: (row: R) => string;
  readonly empty: string;
  readonly sort?: SortLinks;
  /** Marks the table for the ES module's keyboard navigation (j/k, x, enter). */
  readonly keyboard?: boolean;
  /** The link each row opens on enter. */
  readonly rowHref?: (row: R) => string;
  readonly id?: string;
}

/** A table of rows whose sortable headers are links (the sort lives in the URL). */
export function Table<R>(props: TableProps<R>) {
  if (props.rows.length === 0) return <p class="empty">{props.empty}</p>;
  return (
    <table class="data" id={props.id} data-keynav={props.keyboard ? '' : undefined}>
      {props.caption ? <caption>{props.caption}</caption> : null}
      <thead>
        <tr>
          {props.columns.map((col) => (
            <th scope="col" class={col.class} aria-sort={ariaSort(col, props.sort)}>
              {header(col, props.sort)}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {props.rows.map((row) => (
          <tr data-key={props.rowKey(row)} data-href={props.rowHref?.(row)}>
            {props.columns.map((col) => (
              <td class={col.class}>{col.cell(row)}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function ariaSort<R>(col: Column<R>, sort: SortLinks | undefined): 'ascending' | 'descending' | undefined {
  if (!col.sort || !sort?.current) return undefined;
  if (sort.current === col.sort) return 'ascending';
  if (sort.current === `-${col.sort}`) return 'descending';
  return undefined;
}

/** A sortable header links to its ascending sort, or descending when ascending is current. */
function header<R>(col: Column<R>, sort: SortLinks | undefined): Child {
  if (!col.sort || !sort) return col.header;
  const next = sort.current === col.sort ? `-${col.sort}` : col.sort;
  const mark = sort.current === col.sort ? ' ▲' : sort.current === `-${col.sort}` ? ' ▼' : '';
  return (
    <a href={withQuery(sort.path, { ...sort.query, sort: next, cursor: undefined })}>
      {col.header}
      {mark}
    </a>
  );
}

/** Paging by cursor: a link to the next page when there is one, and back to the first. */
export function Pager(props: {
  readonly path: string;
  readonly query: Readonly<Record<string, string | undefined>>;
  readonly nextCursor?: string | undefined;
  readonly shown: number;
  readonly total?: number;
}) {
  const first = props.query.cursor !== undefined;
  return (
    <nav class="pager" aria-label="Pages">
      <span>{props.total !== undefined ? `${props.shown} shown of ${props.total}` : `${props.shown} shown`}</span>
      {first ? <a href={withQuery(props.path, { ...props.query, cursor: undefined })}>First page</a> : null}
      {props.nextCursor ? (
        <a rel="next" href={withQuery(props.path, { ...props.query, cursor: props.nextCursor })}>
          Next page
        </a>
      ) : null}
    </nav>
  );
}
