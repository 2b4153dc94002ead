import * as v from 'valibot';
import type { AlertsState, AlertView, IncidentView } from '../../projections/alerts.js';
import { resolveRule, type AlertFilter, type ListPage, type RuleNames } from '../../projections/alerts-query.js';
import type { DetectionState } from '../../projections/detection.js';
import { ownedPageSchema } from '../../projections/alerts-answers.js';
import type { AppDeps } from '../env.js';
import { HttpError, parseOr400 } from '../errors.js';
import { PageQuery } from '../query.js';
import { route, type Route } from '../route.js';
import { storedJson } from '../stored-json.js';

/** The alerts view (alerts and incidents), as of every write acknowledged before the request. */
export async function alertsView(deps: AppDeps): Promise<AlertsState> {
  await deps.readYourWrites();
  return deps.reads.alerts;
}

/** The installed rules by the names a rule filter takes: id, title, Sigma `name`. */
export function* ruleNames(rules: DetectionState['rules']): Generator<RuleNames> {
  for (const r of rules.values()) yield { id: r.id, title: r.compiled.title, name: r.compiled.name };
}

/**
 * The filter a `rule` parameter means (`resolveRule`): one rule by id (`ruleId`, as before), or every rule with that
 * title or name (`ruleIds`). A rule known by none of these is a 400 that says so, not an empty list that looks like
 * "no alerts".
 */
export function ruleFilter(
  s: AlertsState,
  rules: DetectionState['rules'],
  text: string,
  field = 'rule',
): Pick<AlertFilter, 'ruleId' | 'ruleIds'> {
  const ids = resolveRule(s, ruleNames(rules), text);
  if (ids === undefined)
    throw new HttpError(400, 'unknown rule', [
      `${field}: no rule has the id, title or name ${JSON.stringify(text.slice(0, 256))}`,
    ]);
  return ids.length === 1 && ids[0] === text ? { ruleId: text } : { ruleIds: ids };
}

/** What an alert's and an incident's lists belong to. */
interface Owned {
  alert: AlertView;
  incident: IncidentView;
}

const OWNERS = {
  alert: {
    base: '/api/v1/alerts/{alertId}',
    param: 'alertId',
    params: v.object({ alertId: v.string() }),
    permission: 'alerts:read',
    find: (s: AlertsState, id: string) => s.alerts.get(id),
  },
  incident: {
    base: '/api/v1/incidents/{id}',
    param: 'id',
    params: v.object({ id: v.string() }),
    permission: 'incidents:read',
    find: (s: AlertsState, id: string) => s.incidents.get(id),
  },
} as const;

/**
 * `GET /api/v1/alerts/{alertId}/{part}` or `GET /api/v1/incidents/{id}/{part}`: the whole of one of
 * an alert's or an incident's lists, a page at a time (its detail carries 200 of it), answered as
 * `{alertId | incidentId, <field>, nextCursor}`; an unknown owner is a 404, a cursor the list did
 * not give a 400.
 */
export function ownedListRoute<K extends keyof Owned>(o: {
  readonly owner: K;
  readonly part: string;
  readonly field: string;
  readonly operationId: string;
  readonly summary: string;
  readonly page: (s: AlertsState, owner: Owned[K], limit: number, cursor?: string) => ListPage<unknown> | undefined;
  /** The schema of one entry of the list. */
  readonly item: v.GenericSchema;
  /** A field of the owner every page repeats beside the list, and its schema. */
  readonly alongside?: {
    readonly field: string;
    readonly schema: v.GenericSchema;
    readonly of: (owner: Owned[K]) => unknown;
  };
}): Route {
  const { base, param, params, permission } = OWNERS[o.owner];
  const find = OWNERS[o.owner].find as (s: AlertsState, id: string) => Owned[K] | undefined;
  const idField = `${o.owner}Id`;
  const path: string = `${base}/${o.part}`;
  return route({
    method: 'get',
    path,
    operationId: o.operationId,
    summary: o.summary,
    permission,
    audit: `read_${o.owner}_${o.part}`,
    params,
    query: PageQuery,
    success: {
      status: 200,
      description: `\`{${idField}, ${o.alongside ? `${o.alongside.field}, ` : ''}${o.field}, nextCursor}\``,
      schema: ownedPageSchema(idField, o.field, o.item, o.alongside),
    },
    errors: [400, 404],
    handle: async (c, { deps }) => {
      const q = parseOr400(PageQuery, c.req.query(), 'query');
      const s = await alertsView(deps);
      const id = c.req.param(param)!;
      const owner = find(s, id);
      if (!owner) throw new HttpError(404, `${o.owner} ${id.slice(0, 128)} does not exist`);
      const page = o.page(s, owner, Math.min(q.limit ?? 100, deps.config.limits.pageSize), q.cursor);
      if (!page)
        throw new HttpError(400, 'invalid query', [
          `cursor: not a cursor returned by this endpoint for this ${o.owner}`,
        ]);
      return storedJson(c, {
        [idField]: owner.id,
        ...(o.alongside ? { [o.alongside.field]: o.alongside.of(owner) } : {}),
        [o.field]: page.items,
        nextCursor: page.nextCursor,
      });
    },
  });
}
