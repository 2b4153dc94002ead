import type { Held } from '../../../projections/intel.js';
import { Table } from '../../web/components/table.js';
import { shortTime } from '../../web/components/url.js';
import { feedsAnswer } from '../../routes/intel.js';
import type { PageRoute, PageScope } from '../page-route.js';

/** Indicators a search shows at most. */
const FOUND_SHOWN = 100;

type Feed = ReturnType<typeof feedsAnswer>['feeds'][number];

/** An indicator found by a search, with the feed that holds it. */
interface Found {
  readonly feed: string;
  readonly held: Held;
}

/**
 * The indicators whose value, id or name holds `text` (case aside), feed by feed, at most FOUND_SHOWN: a scan of
 * every indicator (a million in about a tenth of a second).
 */
function searchIndicators(scope: PageScope, text: string): { found: Found[]; more: boolean } {
  const wanted = text.trim().toLowerCase();
  const found: Found[] = [];
  for (const [feed, held] of scope.deps.reads.intel.indicators)
    for (const h of held.values()) {
      const i = h.indicator;
      const hit =
        i.id.toLowerCase().includes(wanted) ||
        (i.name ?? '').toLowerCase().includes(wanted) ||
        i.anyOf.some((alt) => alt.some((t) => t.value.includes(wanted)));
      if (!hit) continue;
      if (found.length >= FOUND_SHOWN) return { found, more: true };
      found.push({ feed, held: h });
    }
  return { found, more: false };
}

function FeedsTable(props: { feeds: Feed[] }) {
  return (
    <Table
      caption={`${props.feeds.length} feed${props.feeds.length === 1 ? '' : 's'}`}
      rows={props.feeds}
      rowKey={(f) => f.name}
      empty="No feed yet: configure intel.feeds, or post a STIX bundle (docs/intel.md)."
      columns={[
        { header: 'Feed', cell: (f) => <b>{f.name}</b> },
        { header: 'Kind', cell: (f) => f.kind },
        {
          header: 'State',
          cell: (f) => (
            <>
              <span class={`state-${f.state === 'failing' ? 'blocked' : f.state === 'ok' ? 'ready' : 'degraded'}`}>
                {f.state}
              </span>
              {'fetch' in f && f.fetch.lastError ? <span class="muted"> · {f.fetch.lastError}</span> : null}
            </>
          ),
        },
        { header: 'Indicators', cell: (f) => f.total.toLocaleString('en'), class: 'num' },
        {
          header: 'Last change',
          cell: (f) =>
            f.updatedAt
              ? `${shortTime(f.updatedAt)}: +${f.lastChange?.added ?? 0} −${f.lastChange?.removed ?? 0}` +
                ` (${f.lastChange?.expired ?? 0} expired)`
              : 'none yet',
        },
        {
          header: 'Back in time',
          cell: (f) =>
            f.retro
              ? `${f.retro.state}: ${f.retro.matched} of ${f.retro.scanned.toLocaleString('en')} events` +
                (f.retro.complete ? '' : ' (stopped by a bound)')
              : '—',
        },
        {
          header: 'Not evaluated',
          cell: (f) =>
            f.unsupportedCount === 0 ? (
              '0'
            ) : (
              <details>
                <summary>{f.unsupportedCount}</summary>
                <ul>
                  {f.unsupported.map((u) => (
                    <li>
                      <code>{u.source}</code>: {u.reason}
                    </li>
                  ))}
                </ul>
              </details>
            ),
        },
      ]}
    />
  );
}

function FoundTable(props: { found: Found[] }) {
  return (
    <Table
      rows={props.found}
      rowKey={(f) => `${f.feed}\u0000${f.held.indicator.id}`}
      empty="No indicator holds that."
      columns={[
        { header: 'Feed', cell: (f) => f.feed },
        {
          header: 'Indicator',
          cell: (f) => (
            <>
              {f.held.indicator.name ? <b>{f.held.indicator.name} </b> : null}
              <code>{f.held.indicator.source}</code>
            </>
          ),
        },
        {
          header: 'Valid',
          cell: (f) => {
            const i = f.held.indicator;
            if (i.revoked) return 'revoked';
            const from = i.validFrom ? shortTime(i.validFrom) : 'ever';
            return `${from} – ${i.validUntil ? shortTime(i.validUntil) : 'no end'}`;
          },
        },
        { header: 'Confidence', cell: (f) => String(f.held.indicator.confidence ?? '—') },
        {
          header: 'Relates to',
          cell: (f) => (f.held.indicator.related ?? []).map((r) => `${r.type} ${r.name}`).join(', ') || '—',
        },
      ]}
    />
  );
}

const intelRoute: PageRoute = {
  method: 'get',
  path: '/intel',
  permission: 'rules:read',
  audit: 'console_intel',
  async handle(c, scope) {
    await scope.deps.readYourWrites();
    const q = (c.req.query('q') ?? '').slice(0, 256);
    const { feeds, indicators } = feedsAnswer(scope.deps);
    const search = q.trim() !== '' ? searchIndicators(scope, q) : undefined;
    return scope.render(
      'Threat intelligence',
      <>
        <h1>Threat intelligence</h1>
        <p class="muted">
          {indicators.toLocaleString('en')} indicators from {feeds.length} feed{feeds.length === 1 ? '' : 's'}, matched
          against every ingested event at its own time; a match raises a <code>threat-intel match</code> alert.
        </p>
        <section class="panel" id="feeds">
          <FeedsTable feeds={feeds} />
        </section>
        <h2>Find an indicator</h2>
        <form method="get" action="/intel" class="filters">
          <label>
            <span>Value, id or name</span>
            <input name="q" value={q} placeholder="hugesoft.org, 223.166.0.0/15, an md5" />
          </label>
          <button type="submit">Search</button>
        </form>
        {search ? (
          <section class="panel" id="found">
            <p>
              {search.found.length}
              {search.more ? '+' : ''} indicator{search.found.length === 1 && !search.more ? ' holds' : 's hold'} “{q}”
              {search.more ? ` (the first ${FOUND_SHOWN} shown)` : ''}.
            </p>
            <FoundTable found={search.found} />
          </section>
        ) : null}
      </>,
    );
  },
};

/** The threat intelligence page: the feeds and an indicator search. */
export const intelPages: readonly PageRoute[] = [intelRoute];
