import { EntityKey } from '../../web/components/entity-key.js';
import { shortTime } from '../../web/components/url.js';
import { leavesOf, PIVOT_FIELD } from '../hunt-query.js';

/** Where a click on a value leads: the hunt with `field:"value"` added, or undefined where it cannot pivot. */
export type PivotHref = (field: string, value: string) => string | undefined;

/** The range presets of the query bar, by the name the URL carries. */
export const RANGE_PRESETS = { '1h': 3_600_000, '24h': 86_400_000, '7d': 604_800_000 } as const;
/** A preset's name. */
export type RangePreset = keyof typeof RANGE_PRESETS;

/** What the query bar shows: the query, the range as chosen, and the fields it completes. */
export interface QueryBarProps {
  readonly q: string;
  readonly range: RangePreset | 'custom';
  readonly since: string;
  readonly until: string;
  readonly fields: readonly string[];
  /** The query's error: where it is and what was expected there. */
  readonly error?: { readonly message: string; readonly position?: number; readonly expected?: readonly string[] };
}

/** The query bar: a GET form, so every hunt has its own URL; the field list feeds the script's completer. */
export function QueryBar(props: QueryBarProps) {
  const err = props.error;
  return (
    <form class="hunt-bar" id="hunt-form" method="get" action="/hunt" role="search">
      <label class="hunt-q">
        <span>Query</span>
        <input
          type="text"
          id="hunt-q"
          name="q"
          value={props.q}
          maxlength={16384}
          autocomplete="off"
          spellcheck={false}
          placeholder="actor.user:alice and class:authentication | stats count() by host.name"
          data-complete="hunt-fields"
          aria-describedby={err ? 'hunt-error' : undefined}
        />
      </label>
      <datalist id="hunt-fields">
        {props.fields.map((f) => (
          <option value={f} />
        ))}
      </datalist>
      <label>
        <span>Range</span>
        <select name="range" id="hunt-range">
          {Object.keys(RANGE_PRESETS).map((r) => (
            <option value={r} selected={props.range === r}>
              last {r}
            </option>
          ))}
          <option value="custom" selected={props.range === 'custom'}>
            since / until
          </option>
        </select>
      </label>
      <label>
        <span>Since</span>
        <input type="text" name="since" id="hunt-since" value={props.since} placeholder="2026-11-23T00:00:00Z" />
      </label>
      <label>
        <span>Until</span>
        <input type="text" name="until" id="hunt-until" value={props.until} placeholder="now" />
      </label>
      <button type="submit">Hunt</button>
      {err ? (
        <div class="hunt-error notice notice-error" id="hunt-error" role="alert">
          <p>{err.message}</p>
          {err.position !== undefined ? (
            <pre>
              {props.q}
              {'\n'}
              {' '.repeat(Math.min(err.position, props.q.length))}^
              {err.expected && err.expected.length > 0 ? ` expected ${err.expected.join(', ')}` : ''}
            </pre>
          ) : null}
        </div>
      ) : null}
    </form>
  );
}

/** Saved queries live in this browser (localStorage, by the page's script); the section stays hidden without it. */
export function SavedQueries() {
  return (
    <section class="panel saved-queries" id="saved-queries" data-saved-queries="" hidden>
      <h2>Saved queries</h2>
      <p class="muted">Kept in this browser only.</p>
      <ul id="saved-list"></ul>
      <form class="inline" id="save-query">
        <input type="text" id="save-name" maxlength={120} placeholder="name" />
        <button type="button" id="save-button">
          Save this query
        </button>
      </form>
    </section>
  );
}

/** A value that pivots when it can. */
function Value(props: { readonly field: string; readonly value: string; readonly pivot: PivotHref }) {
  const href = PIVOT_FIELD.test(props.field) ? props.pivot(props.field, props.value) : undefined;
  const text = props.value.length > 300 ? `${props.value.slice(0, 299)}…` : props.value;
  return href ? (
    <a class="pivot" href={href} data-field={props.field} title={`add ${props.field}:"…" to the query`}>
      {text}
    </a>
  ) : (
    <span>{text}</span>
  );
}

const str = (x: unknown) => (typeof x === 'string' ? x : typeof x === 'number' ? String(x) : undefined);
const get = (e: Record<string, unknown>, path: string) =>
  path
    .split('.')
    .reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), e);

/** One event: a summary line that expands to every field (each value a pivot) and the stored form. */
export function EventRow(props: { readonly e: Record<string, unknown>; readonly pivot: PivotHref }) {
  const { e, pivot } = props;
  const time = str(e.time);
  const kind = ['category', 'class', 'activity'].map((f) => str(e[f])).filter(Boolean);
  const keys = Array.isArray(e.entityKeys) ? e.entityKeys.filter((k): k is string => typeof k === 'string') : [];
  const user = str(get(e, 'actor.user'));
  const adapter = str(get(e, 'source.adapter'));
  return (
    <details class="event hunt-event">
      <summary>
        {time ? <time datetime={time}>{shortTime(time)}</time> : null}{' '}
        {kind.length > 0 ? <b>{kind.join('/')}</b> : null}
        {e.outcome !== undefined ? ` (${String(e.outcome)})` : ''}
        {adapter ? ` · ${adapter}` : ''}
        {user ? (
          <>
            {' · '}
            <Value field="actor.user" value={user} pivot={pivot} />
          </>
        ) : null}
        {keys.slice(0, 4).map((k) => {
          const href = pivot('entityKeys', k);
          return <> {href ? <EntityKey k={k} href={href} /> : <EntityKey k={k} />}</>;
        })}
      </summary>
      <table class="data fields">
        <tbody>
          {leavesOf(e).map(([field, value]) => (
            <tr>
              <th>{field}</th>
              <td>
                <Value field={field} value={value} pivot={pivot} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}

/** Columns of an aggregation that hold counts or times rather than a field's values. */
const NOT_FIELDS = new Set(['count', 'percent', 'time']);

/** A rows answer as a table; the cells of field columns pivot. */
export function RowsTable(props: {
  readonly columns: readonly string[];
  readonly rows: readonly (readonly (string | number | null)[])[];
  readonly pivot: PivotHref;
  readonly id?: string;
}) {
  return (
    <table class="data hunt-rows" id={props.id}>
      <thead>
        <tr>
          {props.columns.map((c) => (
            <th class={NOT_FIELDS.has(c) ? 'num' : undefined}>{c}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {props.rows.map((row) => (
          <tr>
            {props.columns.map((c, i) => {
              const cell = row[i];
              if (cell === null || cell === undefined) return <td class="empty">none</td>;
              if (NOT_FIELDS.has(c) || c.includes('(')) return <td class="num">{String(cell)}</td>;
              return (
                <td>
                  <Value field={c} value={String(cell)} pivot={props.pivot} />
                </td>
              );
            })}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The field list: each field a link to its top values. */
export function FieldList(props: {
  readonly fields: readonly string[];
  readonly current?: string | undefined;
  readonly hrefOf: (field: string) => string;
}) {
  return (
    <section class="panel hunt-fields" aria-label="Fields" id="field-list">
      <h2>Fields</h2>
      <ul>
        {props.fields.map((f) => (
          <li>
            <a href={props.hrefOf(f)} data-field={f} aria-current={props.current === f ? 'true' : undefined}>
              {f}
            </a>
          </li>
        ))}
      </ul>
    </section>
  );
}
