import type { Context } from 'hono';
import type { Child } from 'hono/jsx';
import * as v from 'valibot';
import { HttpError, parseOr400 } from '../../http/errors.js';
import { QueryCursor } from '../../http/query.js';
import type { AppEnv } from '../../http/env.js';
import { HISTORY_SHOWN } from '../../projections/alerts-query.js';

// An alert's or incident's lists are cut at HISTORY_SHOWN on its page; these pages show the whole
// list, HISTORY_SHOWN at a time, with the API's cursors (docs/console.md).

const CursorQuery = v.object({ cursor: v.optional(QueryCursor) });

/** The page's cursor (none: the first page), or a 400. */
export function cursorOf(c: Context<AppEnv>): string | undefined {
  return parseOr400(CursorQuery, c.req.query(), 'query').cursor;
}

/** A cursor the list did not give (another list's, or a name the list no longer has): a 400. */
export function refused(): never {
  throw new HttpError(400, 'invalid query', ['cursor: not a cursor of this list']);
}

/** Says that a list shows only HISTORY_SHOWN of its `total` entries, and links the page with all of them. */
export function More(props: { readonly total: number; readonly which: string; readonly href: string }) {
  if (props.total <= HISTORY_SHOWN) return null;
  return <span class="muted"> (the {props.which} {HISTORY_SHOWN} of {props.total}; <a href={props.href}>all of them</a>)</span>;
}

/** One page of a whole list: where it belongs, the entries, and the link to the next page. */
export function PagedList(props: { readonly heading: Child; readonly back: string; readonly backLabel: string; readonly self: string; readonly nextCursor: string | null; readonly children: Child }) {
  return (
    <>
      <p><a href={props.back}>← {props.backLabel}</a></p>
      <h1>{props.heading}</h1>
      <section class="panel">{props.children}</section>
      {props.nextCursor !== null ? <p><a rel="next" href={`${props.self}?cursor=${encodeURIComponent(props.nextCursor)}`}>Next {HISTORY_SHOWN} →</a></p> : null}
    </>
  );
}
