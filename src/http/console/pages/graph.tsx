import { THREAT_INTEL_RULE } from '../../../commands/alerting/intel-alerts.js';
import * as v from 'valibot';
import { HttpError } from '../../errors.js';
import type { Entity, Relationship } from '../../../projections/graph.js';
import { listEvents } from '../../../projections/evidence-query.js';
import { FilterBar } from '../../web/components/filter-bar.js';
import { Pager, Table } from '../../web/components/table.js';
import { Timeline } from '../../web/components/timeline.js';
import { shortTime, withQuery } from '../../web/components/url.js';
import { optionalField } from '../forms.js';
import { entitiesQuery, huntHref } from '../hunt-query.js';
import type { PageRoute, PageScope } from '../page-route.js';

const GraphPageQuery = v.object({
  entity: optionalField(v.pipe(v.string(), v.trim(), v.maxLength(512))),
  kind: optionalField(v.pipe(v.string(), v.trim(), v.maxLength(64))),
  cursor: optionalField(v.pipe(v.string(), v.maxLength(2048))),
});

/** Entities or relationships listed on one page of the graph. */
const GRAPH_PAGE = 100;
/** Events on an entity's timeline. */
const TIMELINE_EVENTS = 50;

const entityLink = (key: string) => <a href={withQuery('/graph', { entity: key })}>{key}</a>;

/** The entities threat intelligence alerts name (their affected systems): marked in the graph, linked to the alerts. */
function intelMarked(scope: PageScope): Map<string, number> {
  const marked = new Map<string, number>();
  for (const a of scope.deps.reads.alerts.alerts.values()) {
    if (a.ruleId !== THREAT_INTEL_RULE) continue;
    for (const sys of a.affectedSystems) marked.set(sys, (marked.get(sys) ?? 0) + 1);
  }
  return marked;
}

/** An entity with the mark of the threat intelligence alerts that name it. */
const markedLink = (key: string, marked: ReadonlyMap<string, number>) => (
  <>
    {entityLink(key)}
    {marked.has(key) ? (
      <>
        {' '}
        <a
          class="intel-mark"
          href={withQuery('/alerts', { rule: THREAT_INTEL_RULE, entity: key, view: 'flat' })}
          title="threat intelligence alerts name this entity"
        >
          intel ×{marked.get(key)}
        </a>
      </>
    ) : null}
  </>
);

const graphRoute: PageRoute = {
  method: 'get',
  path: '/graph',
  permission: 'graph:read',
  audit: 'console_graph',
  async handle(c, scope) {
    const parsed = v.safeParse(GraphPageQuery, c.req.query());
    if (!parsed.success) throw new HttpError(400, 'invalid query');
    const q = parsed.output;
    await scope.deps.readYourWrites();
    const page = await scope.deps.graph({
      limit: GRAPH_PAGE,
      ...(q.entity ? { entity: q.entity } : {}),
      ...(q.kind ? { kind: q.kind } : {}),
      ...(q.cursor ? { cursor: q.cursor } : {}),
    });
    const search = (
      <FilterBar
        action="/graph"
        values={{ entity: q.entity, kind: q.kind }}
        fields={[
          { kind: 'text', name: 'entity', label: 'Entity', placeholder: 'host:web-01, ip:10.0.0.8, user:root' },
          { kind: 'text', name: 'kind', label: 'Kind', placeholder: 'host, ip, user' },
        ]}
      />
    );
    if (!page)
      return scope.render(
        'Graph',
        <>
          <h1>Graph</h1>
          {search}
          <p class="empty">{`${q.entity} is not in the graph.`}</p>
        </>,
        { status: 404 },
      );
    const marked = scope.can('alerts:read') ? intelMarked(scope) : new Map<string, number>();
    const timeline =
      q.entity && scope.can('events:read')
        ? listEvents(scope.deps.reads, { entityKey: q.entity }, TIMELINE_EVENTS).events
        : undefined;
    return scope.render(
      q.entity ? `Graph: ${q.entity}` : 'Graph',
      <>
        <h1>
          {q.entity ? (
            <>
              Neighbourhood of <code>{q.entity}</code>
            </>
          ) : (
            'Graph'
          )}
        </h1>
        {search}
        {q.entity && scope.can('events:read') ? (
          <p>
            <a id="entity-hunt" href={huntHref(entitiesQuery([q.entity]))}>
              Hunt for {q.entity}
            </a>
          </p>
        ) : null}
        <p class="muted">
          Kinds:{' '}
          {Object.entries(page.kinds).map(([k, n]) => (
            <>
              <a href={withQuery('/graph', { kind: k })}>{k}</a> ({n}){' '}
            </>
          ))}
        </p>
        <div class="grid">
          <section>
            <h2>Entities</h2>
            <Table<Entity>
              rows={page.entities}
              rowKey={(e) => e.key}
              empty="No entity."
              columns={[
                { header: 'Entity', cell: (e) => markedLink(e.key, marked) },
                { header: 'Kind', cell: (e) => e.kind },
                { header: 'Events', class: 'num', cell: (e) => String(e.count) },
                { header: 'Last seen', cell: (e) => shortTime(e.lastSeen) },
              ]}
            />
            <Pager
              path="/graph"
              query={{ entity: q.entity, kind: q.kind, cursor: q.cursor }}
              nextCursor={page.nextCursor ?? undefined}
              shown={page.entities.length}
            />
          </section>
          {q.entity ? (
            <section>
              <h2>Relationships</h2>
              <Table<Relationship>
                rows={page.relationships}
                rowKey={(r) => `${r.from}>${r.type}>${r.to}`}
                empty="No relationship."
                columns={[
                  { header: 'From', cell: (r) => markedLink(r.from, marked) },
                  { header: 'Type', cell: (r) => r.type },
                  { header: 'To', cell: (r) => markedLink(r.to, marked) },
                  { header: 'Seen', class: 'num', cell: (r) => String(r.count) },
                  { header: 'Last', cell: (r) => shortTime(r.lastSeen) },
                ]}
              />
            </section>
          ) : null}
        </div>
        {timeline ? (
          <>
            <h2>
              Timeline <span class="muted">(latest {TIMELINE_EVENTS} events)</span>
            </h2>
            <section class="panel">
              <Timeline
                label="Entity timeline"
                empty="No stored event names this entity."
                entries={timeline.map((e) => ({
                  at: e.time,
                  title: (
                    <>
                      {e.category} / {e.class} / {e.activity} <span class="muted">({e.outcome})</span>
                    </>
                  ),
                  who: `${e.source.adapter}@${e.source.instance}`,
                }))}
              />
            </section>
          </>
        ) : null}
      </>,
    );
  },
};

/** The graph explorer. */
export const graphPages: readonly PageRoute[] = [graphRoute];
