import type { Context } from 'hono';
import type { Child } from 'hono/jsx';
import * as v from 'valibot';
import { HttpError, parseOr400 } from '../../errors.js';
import { QueryCursor } from '../../query.js';
import type { AppEnv } from '../../env.js';
import type { PageScope } from '../page-route.js';
import { HISTORY_SHOWN } from '../../../projections/alerts-query.js';

// An alert's or incident's lists are cut at HISTORY_SHOWN on its page; these pages show the whole
// list, HISTORY_SHOWN at a time, with the API's cursors (docs/console.md).

const CursorQuery = v.object({ cursor: v.optional(QueryCursor) });

/** The page's cursor (none: the first page), or a 400. */
export function cursorOf(c: Context<AppEnv>): string | undefined {
  return parseOr400(CursorQuery, c.req.query(), 'query').cursor;
}

/** Says that a list shows only HISTORY_SHOWN of its `total` entries, and links the page with all of them. */
export function More(props: { readonly total: number; readonly which: string; readonly href: string }) {
  if (props.total <= HISTORY_SHOWN) return null;
  return (
    <span class="muted">
      {' '}
      (the {props.which} {HISTORY_SHOWN} of {props.total}; <a href={props.href}>all of them</a>)
    </span>
  );
}

/** One page of a list: what it shows, and the cursor of the next page (null: this is the last). */
export interface ShownPage {
  readonly content: Child;
  readonly nextCursor: string | null;
}

/**
 * Answers one page of the whole of an alert's or an incident's list (`owner`: its title and page),
 * with a link back and one to the next page; a 400 when the page is undefined (a cursor the list
 * did not give: another list's, or a name the list no longer has).
 */
export function listPage(
  scope: PageScope,
  owner: { readonly title: string; readonly base: string },
  part: string,
  heading: string,
  page: ShownPage | undefined,
): Response {
  if (!page) throw new HttpError(400, 'invalid query', ['cursor: not a cursor of this list']);
  return scope.render(
    `${owner.title}: ${heading}`,
    <>
      <p>
        <a href={owner.base}>← {owner.title}</a>
      </p>
      <h1>
        {owner.title}: {heading}
      </h1>
      <section class="panel">{page.content}</section>
      {page.nextCursor !== null ? (
        <p>
          <a rel="next" href={`${owner.base}/${part}?cursor=${encodeURIComponent(page.nextCursor)}`}>
            Next {HISTORY_SHOWN} →
          </a>
        </p>
      ) : null}
    </>,
  );
}
