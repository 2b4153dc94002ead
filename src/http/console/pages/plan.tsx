import { detectionPlan, type PlanEntry } from '../../../projections/plan.js';
import type { DetectionState } from '../../../projections/detection.js';
import type { SourcesState } from '../../../projections/sources.js';
import { Table } from '../../web/components/table.js';
import type { PageRoute } from '../page-route.js';

const ORDER = { quarantined: 0, blocked: 1, degraded: 2, ready: 3 } as const;

const planRoute: PageRoute = {
  method: 'get',
  path: '/plan',
  permission: 'plan:read',
  audit: 'console_detection_plan',
  async handle(c, scope) {
    await scope.deps.readYourWrites();
    const m = scope.deps.reads;
    const plan = detectionPlan(m.detection, m.sources, scope.deps.now(), scope.deps.config.detection.freshnessHours);
    const only = c.req.query('state');
    const rows = plan.rules
      .filter((r) => !only || r.state === only)
      .sort((a, b) => ORDER[a.state] - ORDER[b.state] || a.title.localeCompare(b.title));
    const s = plan.summary;
    return scope.render(
      'Detection plan',
      <>
        <h1>Detection plan</h1>
        <div class="stats">
          <a class="stat" href="/plan?state=ready">
            <b class="state-ready">{s.ready}</b>
            <span>ready</span>
          </a>
          <a class="stat" href="/plan?state=degraded">
            <b class="state-degraded">{s.degraded}</b>
            <span>degraded</span>
          </a>
          <a class="stat" href="/plan?state=blocked">
            <b class="state-blocked">{s.blocked}</b>
            <span>blocked</span>
          </a>
          <a class="stat" href="/plan?state=quarantined">
            <b class="state-quarantined">{s.quarantined}</b>
            <span>quarantined</span>
          </a>
          <a class="stat" href="/plan">
            <b>{s.rules}</b>
            <span>rules ({s.disabled} disabled)</span>
          </a>
        </div>
        <p class="muted">
          A rule is ready when every source and field it needs has been seen within {plan.freshnessHours} h; the fix
          says what to connect.
        </p>
        <Table<PlanEntry>
          rows={rows}
          rowKey={(r) => r.ruleId}
          empty="No rule in this state."
          columns={[
            { header: 'State', cell: (r) => <span class={`state-${r.state}`}>{r.state}</span> },
            {
              header: 'Rule',
              cell: (r) =>
                scope.can('rules:read') ? <a href={`/rules/${encodeURIComponent(r.ruleId)}`}>{r.title}</a> : r.title,
            },
            { header: 'Enabled', cell: (r) => (r.enabled ? 'yes' : 'no') },
            { header: 'Needs', cell: (r) => r.requiredCapabilities.join(', ') },
            {
              header: 'Missing, and the fix',
              cell: (r) =>
                r.quarantine ? (
                  <span>
                    over its time budget: {r.quarantine.reason} (since {r.quarantine.at}). Enable it again on its page
                    once the rule or the budget is fixed.
                  </span>
                ) : r.missingCapabilities.length === 0 ? (
                  '—'
                ) : (
                  <ul>
                    {r.missingCapabilities.map((x) => (
                      <li>
                        <code>{x.capability}</code> ({x.problem.replace(/_/g, ' ')}): {x.fix}
                      </li>
                    ))}
                  </ul>
                ),
            },
          ]}
        />
      </>,
    );
  },
};

/** The detection plan page. */
export const planPages: readonly PageRoute[] = [planRoute];
