import * as v from 'valibot';
import { IsoDateTime } from '../../../events/normalized-event.js';
import { HttpError } from '../../errors.js';
import { canonicalIso } from '../../query.js';
import { listAudit, type AuditEntry } from '../../../projections/audit.js';
import { FilterBar } from '../../web/components/filter-bar.js';
import { Pager, Table } from '../../web/components/table.js';
import { shortTime } from '../../web/components/url.js';
import { optionalField } from '../forms.js';
import type { PageRoute } from '../page-route.js';

/** The audit page's query: the filters of `GET /api/v1/audit`. */
const AuditPageQuery = v.object({
  principal: optionalField(v.pipe(v.string(), v.trim(), v.maxLength(128))),
  status: optionalField(v.pipe(v.string(), v.regex(/^[1-5]\d\d$/, 'expected an HTTP status'), v.transform(Number))),
  route: optionalField(v.pipe(v.string(), v.trim(), v.maxLength(256))),
  method: optionalField(v.picklist(['GET', 'POST', 'PATCH', 'PUT', 'DELETE'])),
  since: optionalField(IsoDateTime),
  until: optionalField(IsoDateTime),
  cursor: optionalField(v.pipe(v.string(), v.regex(/^\d{1,15}$/), v.transform(Number))),
});

/** Entries on one page. */
const AUDIT_PAGE = 100;

const auditRoute: PageRoute = {
  method: 'get',
  path: '/audit',
  permission: 'audit:read',
  audit: 'console_audit',
  async handle(c, scope) {
    const parsed = v.safeParse(AuditPageQuery, c.req.query());
    if (!parsed.success)
      throw new HttpError(
        400,
        'invalid filter',
        parsed.issues.map((i) => `${v.getDotPath(i) ?? 'query'}: ${i.message}`),
      );
    const q = parsed.output;
    await scope.deps.readYourWrites();
    const page = listAudit(
      scope.deps.reads,
      {
        ...(q.principal ? { principal: q.principal } : {}),
        ...(q.status !== undefined ? { status: q.status } : {}),
        ...(q.route ? { route: q.route } : {}),
        ...(q.method ? { method: q.method } : {}),
        ...(q.since ? { since: canonicalIso(q.since) } : {}),
        ...(q.until ? { until: canonicalIso(q.until) } : {}),
      },
      AUDIT_PAGE,
      q.cursor,
    );
    const raw = c.req.query();
    const values = {
      principal: raw['principal'],
      status: raw['status'],
      route: raw['route'],
      method: raw['method'],
      since: raw['since'],
      until: raw['until'],
    };
    return scope.render(
      'Audit trail',
      <>
        <h1>Audit trail</h1>
        <FilterBar
          action="/audit"
          values={values}
          fields={[
            { kind: 'text', name: 'principal', label: 'Principal' },
            { kind: 'text', name: 'status', label: 'Status', placeholder: '403' },
            { kind: 'text', name: 'route', label: 'Route', placeholder: '/api/v1/alerts/{alertId}' },
            {
              kind: 'select',
              name: 'method',
              label: 'Method',
              options: ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'].map((m) => [m, m] as const),
            },
            { kind: 'time', name: 'since', label: 'Since' },
            { kind: 'time', name: 'until', label: 'Until' },
          ]}
        />
        <Table<AuditEntry>
          rows={page.entries}
          rowKey={(e) => String(e.seq)}
          empty="No audit record matches."
          columns={[
            { header: 'When', cell: (e) => shortTime(e.at) },
            { header: 'Principal', cell: (e) => e.principal ?? <span class="muted">none</span> },
            { header: 'How', cell: (e) => e.authentication },
            {
              header: 'Request',
              cell: (e) => (
                <code>
                  {e.method} {e.route}
                </code>
              ),
            },
            { header: 'Status', class: 'num', cell: (e) => String(e.status) },
            { header: 'From', cell: (e) => e.sourceAddress },
            { header: 'Record', class: 'num', cell: (e) => (e.count ? `${e.count}× ${e.reason ?? ''}` : `#${e.seq}`) },
          ]}
        />
        <Pager
          path="/audit"
          query={{ ...values, cursor: q.cursor !== undefined ? String(q.cursor) : undefined }}
          nextCursor={page.nextCursor === null ? undefined : String(page.nextCursor)}
          shown={page.entries.length}
        />
      </>,
    );
  },
};

/** The audit trail (admin). */
export const auditPages: readonly PageRoute[] = [auditRoute];
