import * as v from 'valibot';
import { HUNT_FIELDS } from '../../../detection/hunt/index.js';
import { IsoDateTime } from '../../../events/normalized-event.js';
import { epochMillisOf } from '../../../kernel/time.js';
import { encodeCursor } from '../../../projections/cursor.js';
import { HttpError } from '../../errors.js';
import { Histogram } from '../../web/components/histogram.js';
import { shortTime, withQuery } from '../../web/components/url.js';
import { optionalField } from '../forms.js';
import { auditSearches, MAX_QUERY_BYTES, runSearch, type SearchRun } from '../hunt-search.js';
import {
  autoSpan,
  bucketsOf,
  leavesOf,
  PIVOT_FIELD,
  seriesOf,
  splitPipes,
  timechartOf,
  topOf,
  withTerm,
} from '../hunt-query.js';
import type { PageRoute, PageScope } from '../page-route.js';
import { huntRulePages } from './hunt-rule.js';
import {
  EventRow,
  FieldList,
  QueryBar,
  RANGE_PRESETS,
  RowsTable,
  SavedQueries,
  type PivotHref,
  type RangePreset,
} from './hunt-views.js';

/** The hunt page's query string: the query, its range (a preset, or since/until), the page and the field opened. */
const HuntPageQuery = v.object({
  q: optionalField(v.pipe(v.string(), v.maxLength(MAX_QUERY_BYTES))),
  range: optionalField(v.picklist(['1h', '24h', '7d', 'custom'])),
  since: optionalField(v.pipe(v.string(), v.trim(), IsoDateTime)),
  until: optionalField(v.pipe(v.string(), v.trim(), IsoDateTime)),
  cursor: optionalField(v.pipe(v.string(), v.maxLength(2048))),
  top: optionalField(v.pipe(v.string(), v.maxLength(256), v.regex(PIVOT_FIELD, 'expected a field path'))),
});
type HuntPageQuery = v.InferOutput<typeof HuntPageQuery>;

/** Events on one page of results. */
const HUNT_PAGE = 50;

/** The range a hunt covers: a preset counts back from now; since/until (either) make it custom. */
function rangeOf(q: HuntPageQuery, now: number) {
  const preset: RangePreset | undefined =
    q.range !== undefined && q.range !== 'custom'
      ? q.range
      : q.since === undefined && q.until === undefined
        ? '24h'
        : undefined;
  if (preset) return { preset, sinceMs: now - RANGE_PRESETS[preset], untilMs: now };
  const untilMs = q.until !== undefined ? epochMillisOf(q.until)! : now;
  const sinceMs = q.since !== undefined ? epochMillisOf(q.since)! : untilMs - RANGE_PRESETS['24h'];
  return { preset: 'custom' as const, sinceMs, untilMs };
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The runs of one page: the query, then (when it has no pipes) its histogram, then a field's top values. */
interface HuntRuns {
  readonly main: SearchRun;
  readonly histogram?: SearchRun | { readonly error: string };
  readonly top?: SearchRun | { readonly error: string };
}

/** Runs an extra search of the page; one that fails is said on the page rather than failing it. */
async function extra(scope: PageScope, query: string, since: string, until: string) {
  try {
    return await runSearch(scope.deps, { query, since, until, limit: 1 });
  } catch (err) {
    if (!(err instanceof HttpError) || err.status >= 500) throw err;
    return { error: err.message };
  }
}

const ran = (x: SearchRun | { error: string } | undefined): x is SearchRun => x !== undefined && 'answer' in x;

/**
 * The hunt page: its searches see every write acknowledged before the request (runSearch waits for the read side),
 * and are audited in one batch with the request's own access record.
 */
const huntRoute: PageRoute = {
  method: 'get',
  path: '/hunt',
  permission: 'events:read',
  audit: 'console_hunt',
  async handle(c, scope) {
    const parsed = v.safeParse(HuntPageQuery, c.req.query());
    if (!parsed.success)
      throw new HttpError(
        400,
        'invalid hunt',
        parsed.issues.map((i) => `${v.getDotPath(i) ?? 'query'}: ${i.message}`),
      );
    const q = parsed.output;
    const text = q.q ?? '';
    const { preset, sinceMs, untilMs } = rangeOf(q, scope.deps.now().getTime());
    const [since, until] = [iso(sinceMs), iso(untilMs)];
    const shown = { q: text, range: preset, since: q.since ?? '', until: q.until ?? '' };
    // Links keep the query and the range as chosen (a preset stays relative to now).
    const base = { q: text, range: preset, ...(preset === 'custom' ? { since, until } : {}), top: q.top };
    const href = (over: Record<string, string | undefined>) => withQuery('/hunt', { ...base, ...over });
    const pivot: PivotHref = (field, value) => href({ q: withTerm(text, field, value), cursor: undefined });
    const render = (body: unknown, status: 200 | 400 | 404 | 429 = 200, error?: HttpError) =>
      scope.render(
        'Hunt',
        <>
          <h1>Hunt</h1>
          <QueryBar
            {...shown}
            fields={HUNT_FIELDS}
            {...(error
              ? {
                  error: {
                    message: error.message,
                    ...(typeof error.details?.position === 'number' ? { position: error.details.position } : {}),
                    ...(Array.isArray(error.details?.expected) ? { expected: error.details.expected.map(String) } : {}),
                  },
                }
              : {})}
          />
          <p class="hunt-presets">
            {Object.keys(RANGE_PRESETS).map((r) => (
              <>
                <a href={href({ range: r, since: undefined, until: undefined, cursor: undefined })}>last {r}</a>{' '}
              </>
            ))}
            · {shortTime(since)} to {shortTime(until)}
          </p>
          {body as never}
        </>,
        { status },
      );
    if (q.q === undefined)
      return render(
        <>
          <HuntHelp />
          <SavedQueries />
        </>,
      );
    const { filter, pipes } = splitPipes(text);
    let runs: HuntRuns;
    try {
      const main = await runSearch(scope.deps, {
        query: text,
        since,
        until,
        limit: HUNT_PAGE,
        ...(q.cursor ? { cursor: q.cursor } : {}),
      });
      const span = autoSpan(sinceMs, untilMs);
      runs = {
        main,
        ...(pipes === '' ? { histogram: await extra(scope, timechartOf(filter, span.text), since, until) } : {}),
        ...(q.top ? { top: await extra(scope, topOf(filter, q.top), since, until) } : {}),
      };
    } catch (err) {
      if (!(err instanceof HttpError) || ![400, 404, 429].includes(err.status)) throw err;
      return render(null, err.status as 400, err);
    }
    const all = [runs.main, runs.histogram, runs.top].filter(ran);
    const ids = await auditSearches(c, scope.deps, all, 200);
    const answer = runs.main.answer;
    const nextCursor = answer.output === 'events' && answer.next ? encodeCursor(answer.next) : undefined;
    const seen = answer.output === 'events' ? answer.events.flatMap((e) => leavesOf(e).map(([f]) => f)) : [];
    const fields = [...new Set([...HUNT_FIELDS, ...seen])].filter((f) => PIVOT_FIELD.test(f)).slice(0, 300);
    const span = autoSpan(sinceMs, untilMs);
    return render(
      <>
        <p class="hunt-facts" id="hunt-facts">
          {answer.output === 'events' ? `${answer.events.length} events` : `${answer.rows.length} rows`} ·{' '}
          {answer.scanned} events read · {runs.main.took} ms · search {ids[0]} in the audit trail
        </p>
        {answer.complete ? null : (
          <p class="notice notice-error" id="hunt-incomplete" role="status">
            Incomplete: the search stopped at its bound ({scope.deps.config.limits.searchEvents} events or{' '}
            {scope.deps.config.limits.searchSeconds} s) after reading {answer.scanned} events
            {answer.output === 'rows' && answer.coveredSince !== null
              ? `; the rows count events since ${shortTime(iso(answer.coveredSince))} only`
              : ''}
            . Narrow the range or the query for a complete answer.
          </p>
        )}
        <HistogramPanel
          runs={runs}
          sinceMs={sinceMs}
          untilMs={untilMs}
          spanMs={span.ms}
          zoom={(s, u) => href({ range: 'custom', since: s, until: u, cursor: undefined })}
        />
        <div class="hunt-layout">
          <div class="hunt-side">
            <SavedQueries />
            <FieldList fields={fields} current={q.top} hrefOf={(f) => href({ top: f, cursor: undefined })} />
          </div>
          <div class="hunt-results">
            {q.top ? <TopPanel field={q.top} run={runs.top} pivot={pivot} close={href({ top: undefined })} /> : null}
            <RuleLink href={withQuery('/hunt/rule', { q: text, since, until })} />
            <section class="panel" id="hunt-results">
              {answer.output === 'events' ? (
                answer.events.length === 0 ? (
                  <p class="empty">No event matches this query in this range.</p>
                ) : (
                  answer.events.map((e) => <EventRow e={e} pivot={pivot} />)
                )
              ) : (
                <RowsTable columns={answer.columns} rows={answer.rows} pivot={pivot} id="hunt-rows" />
              )}
              {answer.output === 'rows' && answer.truncated ? (
                <p class="notice notice-error">The aggregation stopped adding groups at its bound.</p>
              ) : null}
            </section>
            <nav class="pager" aria-label="Pages">
              {q.cursor ? <a href={href({ cursor: undefined })}>First page</a> : null}
              {nextCursor ? (
                <a rel="next" href={href({ cursor: nextCursor, range: 'custom', since, until })}>
                  Next page
                </a>
              ) : null}
            </nav>
          </div>
        </div>
      </>,
    );
  },
};

/** The histogram, or why there is none. */
function HistogramPanel(props: {
  readonly runs: HuntRuns;
  readonly sinceMs: number;
  readonly untilMs: number;
  readonly spanMs: number;
  readonly zoom: (sinceIso: string, untilIso: string) => string;
}) {
  const { runs } = props;
  // A query that is itself a timechart is drawn as one; other queries with pipes have no histogram.
  const own = runs.main.answer.output === 'rows' ? runs.main.answer : undefined;
  const source = ran(runs.histogram) ? runs.histogram.answer : own;
  const series = source?.output === 'rows' ? seriesOf(source.columns, source.rows) : undefined;
  if (!series) {
    const why =
      runs.histogram && !ran(runs.histogram)
        ? `No histogram: ${runs.histogram.error}`
        : runs.histogram
          ? 'No histogram: the query language answered no time series.'
          : 'No histogram for a query with pipes.';
    return (
      <p class="empty" id="hunt-histogram-none">
        {why}
      </p>
    );
  }
  // Buckets as the engine chose them when it answered its own span, else the page's.
  const spanMs = series.length > 1 ? series[1]![0] - series[0]![0] : props.spanMs;
  return (
    <section class="panel" id="hunt-histogram">
      <Histogram
        title="Matches over time"
        buckets={bucketsOf(series, props.sinceMs, props.untilMs, spanMs)}
        sinceMs={props.sinceMs}
        untilMs={props.untilMs}
        zoomHref={props.zoom}
      />
    </section>
  );
}

/** A field's top 10 values over the query's filter, each a pivot. */
function TopPanel(props: {
  readonly field: string;
  readonly run: SearchRun | { readonly error: string } | undefined;
  readonly pivot: PivotHref;
  readonly close: string;
}) {
  const { run } = props;
  return (
    <section class="panel" id="hunt-top">
      <h2>
        Top values of {props.field} <a href={props.close}>close</a>
      </h2>
      {!ran(run) ? (
        <p class="empty">{run ? `Not available: ${run.error}` : 'Not available.'}</p>
      ) : run.answer.output === 'rows' ? (
        <RowsTable columns={run.answer.columns} rows={run.answer.rows} pivot={props.pivot} />
      ) : (
        <p class="empty">The query language answered events, not counts.</p>
      )}
    </section>
  );
}

/** "Save as rule": the query as Sigma, in the rule preview. */
function RuleLink(props: { readonly href: string }) {
  return (
    <p class="hunt-actions">
      <a class="button" id="save-as-rule" href={props.href}>
        Save as rule…
      </a>
    </p>
  );
}

/** What the page shows before the first hunt: the language in a few lines (docs/hunting.md has it whole). */
function HuntHelp() {
  const examples = [
    'class:authentication and outcome:failure | stats count() by actor.user',
    'actor.user:alice and class:authentication | stats count() by host.name',
    'dns.question.name:*.example.ru',
    'class:authentication | timechart span=1h count() by actor.user',
  ];
  return (
    <section class="panel" id="hunt-help">
      <h2>Hunting</h2>
      <p>
        A query is Kibana Query Language (<code>field:value</code>, <code>*</code> wildcards, quoted phrases,{' '}
        <code>and</code>/<code>or</code>/<code>not</code>, ranges) followed by optional pipes (<code>stats</code>,{' '}
        <code>top</code>, <code>timechart</code>, <code>fields</code>, <code>sort</code>, <code>head</code>); see
        docs/hunting.md. Every hunt is a record in the audit trail.
      </p>
      <ul>
        {examples.map((x) => (
          <li>
            <a href={withQuery('/hunt', { q: x })}>
              <code>{x}</code>
            </a>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** The hunt page and its "save as rule". */
export const huntPages: readonly PageRoute[] = [huntRoute, ...huntRulePages];
