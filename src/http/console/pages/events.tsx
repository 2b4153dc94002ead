import * as v from 'valibot';
import { CATEGORIES, IsoDateTime, type NormalizedEvent } from '../../../events/normalized-event.js';
import { HttpError } from '../../errors.js';
import { epochMillisOf } from '../../../kernel/time.js';
import { listEvents, parseEventCursor } from '../../../projections/evidence-query.js';
import { EntityKey } from '../../web/components/entity-key.js';
import { FilterBar } from '../../web/components/filter-bar.js';
import { Pager } from '../../web/components/table.js';
import { shortTime, withQuery } from '../../web/components/url.js';
import { optionalField } from '../forms.js';
import type { PageRoute } from '../page-route.js';

/** The events page's query: the filters of `GET /api/v1/events` (empty fields are no filter). */
const EventsPageQuery = v.object({
  since: optionalField(IsoDateTime),
  until: optionalField(IsoDateTime),
  category: optionalField(v.picklist(CATEGORIES)),
  class: optionalField(v.pipe(v.string(), v.trim(), v.maxLength(256))),
  entityKey: optionalField(v.pipe(v.string(), v.trim(), v.maxLength(512))),
  adapter: optionalField(v.pipe(v.string(), v.trim(), v.maxLength(256))),
  cursor: optionalField(v.pipe(v.string(), v.maxLength(2048))),
  /** `show`: include the service's own access records (hidden by default). */
  own: optionalField(v.picklist(['show'])),
});

/**
 * Classes of the records Vigil writes about its own API: one `api_access` event per request and per summary of
 * refused requests (src/http/access-records.ts). The events page hides them unless asked (`own=show`, or a search
 * for that class): on a quiet instance they are most of what is stored, and the console's own page views among them.
 * Vigil's other records (collector and syslog refusals, credential changes, export states) are about others and stay.
 */
export const OWN_ACCESS_CLASSES = ['api_access'] as const;

/** Events on one page. */
const EVENTS_PAGE = 50;

/** One event as a row that expands to its whole stored form. */
function EventRow(props: { readonly e: NormalizedEvent }) {
  const e = props.e;
  return (
    <details class="event">
      <summary>
        <time datetime={e.time}>{shortTime(e.time)}</time> ·{' '}
        <b>
          {e.category}/{e.class}/{e.activity}
        </b>{' '}
        ({e.outcome}) · {e.source.adapter}@{e.source.instance} ·{' '}
        {e.entityKeys.slice(0, 4).map((k) => (
          <>
            <EntityKey k={k} href={withQuery('/events', { entityKey: k })} />{' '}
          </>
        ))}
      </summary>
      <pre>{JSON.stringify(e, null, 2)}</pre>
    </details>
  );
}

const eventsRoute: PageRoute = {
  method: 'get',
  path: '/events',
  permission: 'events:read',
  audit: 'console_events',
  async handle(c, scope) {
    const parsed = v.safeParse(EventsPageQuery, c.req.query());
    if (!parsed.success)
      throw new HttpError(
        400,
        'invalid filter',
        parsed.issues.map((i) => `${v.getDotPath(i) ?? 'query'}: ${i.message}`),
      );
    const q = parsed.output;
    const after = q.cursor ? parseEventCursor(q.cursor) : undefined;
    if (q.cursor && !after) throw new HttpError(400, 'invalid query', ['cursor: not a cursor of this list']);
    await scope.deps.readYourWrites();
    const hideOwn = q.own === undefined && !OWN_ACCESS_CLASSES.some((x) => x === q.class);
    const page = listEvents(
      scope.deps.reads,
      {
        ...(q.since ? { sinceMs: epochMillisOf(q.since)! } : {}),
        ...(q.until ? { untilMs: epochMillisOf(q.until)! } : {}),
        ...(q.category ? { category: q.category } : {}),
        ...(q.class ? { class: q.class } : {}),
        ...(q.entityKey ? { entityKey: q.entityKey } : {}),
        ...(q.adapter ? { adapter: q.adapter } : {}),
        ...(hideOwn ? { excludeClasses: OWN_ACCESS_CLASSES } : {}),
      },
      EVENTS_PAGE,
      after,
    );
    const values = {
      since: q.since,
      until: q.until,
      category: q.category,
      class: q.class,
      entityKey: q.entityKey,
      adapter: q.adapter,
      own: q.own,
    };
    const { own: _own, ...filters } = values;
    return scope.render(
      'Events',
      <>
        <h1>Events</h1>
        <p class="view-toggle" id="own-toggle">
          {hideOwn ? (
            <>
              Vigil's own API access records are hidden.{' '}
              <a href={withQuery('/events', { ...filters, own: 'show' })}>Show them</a>
            </>
          ) : q.own !== undefined ? (
            <>
              Vigil's own API access records are shown. <a href={withQuery('/events', filters)}>Hide them</a>
            </>
          ) : null}
        </p>
        <FilterBar
          action="/events"
          values={values}
          keep={{ own: q.own }}
          fields={[
            { kind: 'time', name: 'since', label: 'Since' },
            { kind: 'time', name: 'until', label: 'Until' },
            { kind: 'select', name: 'category', label: 'Category', options: CATEGORIES.map((x) => [x, x] as const) },
            { kind: 'text', name: 'class', label: 'Class', placeholder: 'authentication' },
            { kind: 'text', name: 'entityKey', label: 'Entity', placeholder: 'ip:10.0.0.8' },
            { kind: 'text', name: 'adapter', label: 'Source adapter', placeholder: 'linux-journal' },
          ]}
        />
        <section class="panel" id="events">
          {page.events.length === 0 ? (
            <p class="empty">No event matches these filters.</p>
          ) : (
            page.events.map((e) => <EventRow e={e} />)
          )}
        </section>
        <Pager
          path="/events"
          query={{ ...values, cursor: q.cursor }}
          nextCursor={page.nextCursor ?? undefined}
          shown={page.events.length}
        />
      </>,
    );
  },
};

/** The events search. */
export const eventPages: readonly PageRoute[] = [eventsRoute];
