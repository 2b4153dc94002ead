import * as v from 'valibot';
import { attackMatrix, type AttackCell, type AttackMatrix } from '../../../projections/plan-attack.js';
import {
  detectionPlan,
  planPage,
  PLAN_PROBLEMS,
  PLAN_STATES,
  type PlanEntry,
  type PlanFix,
  type PlanPage,
} from '../../../projections/plan.js';
import { HttpError } from '../../errors.js';
import { Pager, Table } from '../../web/components/table.js';
import { FilterBar } from '../../web/components/filter-bar.js';
import { withQuery } from '../../web/components/url.js';
import type { PageRoute, PageScope } from '../page-route.js';

/** Entries on one page of the console's plan table. */
export const PLAN_TABLE_PAGE = 50;

const Text = (max: number) => v.optional(v.pipe(v.string(), v.trim(), v.maxLength(max)));

/** The plan page's query: the API's filters and cursor (an empty field of the filter form means "any"). */
const PlanPageQuery = v.strictObject({
  state: v.optional(v.picklist(PLAN_STATES)),
  problem: v.optional(v.picklist(PLAN_PROBLEMS)),
  source: Text(512),
  tag: Text(128),
  text: Text(256),
  cursor: v.optional(v.pipe(v.string(), v.maxLength(2048))),
});
type PlanQuery = v.InferOutput<typeof PlanPageQuery>;

const PROBLEM_WORDS: Readonly<Record<string, string>> = {
  quarantined: 'quarantined',
  logsource_unsupported: 'logsource unsupported',
  no_source_connected: 'no source connected',
  stale: 'source stale',
  fields_never_seen: 'fields never seen',
};

function fixAnchor(source: string): string {
  return `fix-${source.replace(/[^a-z0-9]+/gi, '-').slice(0, 80)}`;
}

/** The grouped view: what to connect, once per source, with the rules it would unblock. */
function Fixes(props: { fixes: readonly PlanFix[] }) {
  if (props.fixes.length === 0) return <p class="muted">No rule waits for a source.</p>;
  return (
    <table class="fixes">
      <thead>
        <tr>
          <th>Rules</th>
          <th>Source they need</th>
          <th>Problem</th>
          <th>What to do</th>
        </tr>
      </thead>
      <tbody>
        {props.fixes.map((f) => (
          <tr id={fixAnchor(f.source)}>
            <td>
              <a href={withQuery('/plan', { source: f.source })}>{f.rules}</a>
            </td>
            <td>
              {f.describe}
              <br />
              <code class="muted">{f.source}</code>
            </td>
            <td>{PROBLEM_WORDS[f.problem]}</td>
            <td>
              {f.action} <span class="muted">({f.doc})</span>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function cellTitle(c: AttackCell): string {
  const parts = (['ready', 'degraded', 'blocked', 'quarantined'] as const)
    .filter((s) => c.byState[s] > 0)
    .map((s) => `${c.byState[s]} ${s}`);
  const subs = c.subTechniques.length > 0 ? `; sub-techniques ${c.subTechniques.join(', ').toUpperCase()}` : '';
  return `${c.technique.toUpperCase()}: ${c.rules} rule${c.rules === 1 ? '' : 's'} (${parts.join(', ')})${subs}`;
}

function Cell(props: { cell: AttackCell }) {
  const c = props.cell;
  return (
    <a
      class={`technique cell-${c.best}`}
      href={withQuery('/plan', { tag: `attack.${c.technique}` })}
      title={cellTitle(c)}
    >
      <b>{c.technique.toUpperCase()}</b> <span>{c.rules}</span>
      {c.subTechniques.length > 0 ? <small>+{c.subTechniques.length} sub</small> : null}
    </a>
  );
}

/** The ATT&CK coverage matrix: tactic columns in ATT&CK order, technique cells coloured by their best state. */
function Matrix(props: { matrix: AttackMatrix }) {
  const m = props.matrix;
  const columns = m.tactics.filter((t) => t.techniques.length > 0);
  if (m.rulesTagged === 0) return <p class="muted">No enabled rule carries an ATT&CK technique tag.</p>;
  return (
    <>
      <p class="legend">
        Each cell is a technique (sub-techniques folded in) under a tactic its rules are tagged with, showing how many
        enabled rules cover it, coloured by the <b>best</b> state among them:{' '}
        <span class="technique cell-ready">ready</span> at least one rule can fire,{' '}
        <span class="technique cell-degraded">degraded</span> the best one lacks a fresh source or a field,{' '}
        <span class="technique cell-blocked">blocked</span> none can fire,{' '}
        <span class="technique cell-quarantined">quarantined</span>. A cell opens the rules of that technique.
      </p>
      <div class="attack-matrix" role="table" aria-label="ATT&CK coverage">
        {columns.map((t) => (
          <div class="tactic" role="rowgroup">
            <h3 role="columnheader">{t.tactic}</h3>
            {t.techniques.map((c) => (
              <Cell cell={c} />
            ))}
          </div>
        ))}
        {m.untactic.length > 0 ? (
          <div class="tactic" role="rowgroup">
            <h3 role="columnheader">no tactic tag</h3>
            {m.untactic.map((c) => (
              <Cell cell={c} />
            ))}
          </div>
        ) : null}
      </div>
    </>
  );
}

/** What an entry lacks, in a few words: the source (linked to its fix) or the fields; never the fix's text again. */
function Lacks(props: { entry: PlanEntry }) {
  const e = props.entry;
  if (e.quarantine)
    return (
      <span>
        over its time budget: {e.quarantine.reason} (since {e.quarantine.at}); enable it again on its page once fixed
      </span>
    );
  if (e.missingCapabilities.length === 0) return <span>—</span>;
  const fields = e.missingCapabilities.filter((m) => m.problem === 'fields_never_seen').map((m) => m.capability);
  const source = e.missingCapabilities.find((m) => m.problem !== 'fields_never_seen');
  return (
    <span>
      {source ? (
        e.needs !== null ? (
          <a href={`#${fixAnchor(e.needs)}`}>{source.capability}</a>
        ) : (
          source.capability
        )
      ) : null}
      {source && fields.length > 0 ? '; ' : null}
      {fields.length > 0 ? `never seen: ${fields.map((f) => f.replace(/^field /, '')).join(', ')}` : null}
    </span>
  );
}

/** The plan states the page counts at its top, each a link to its rules. */
const PLAN_STATES_SHOWN = ['ready', 'degraded', 'blocked', 'quarantined'] as const;

function Stat(props: { href: string; n: number; label: string; cls?: string }) {
  return (
    <a class="stat" href={props.href}>
      <b class={props.cls}>{props.n}</b>
      <span>{props.label}</span>
    </a>
  );
}

function PlanView(props: { scope: PageScope; q: PlanQuery; page: PlanPage; matrix: AttackMatrix; filtered: boolean }) {
  const { scope, q, page, matrix } = props;
  const s = page.summary;
  const query = { state: q.state, problem: q.problem, source: q.source, tag: q.tag, text: q.text, cursor: q.cursor };
  const problems = PLAN_PROBLEMS.filter((p) => s.byProblem[p] > 0);
  return (
    <>
      <h1>Detection plan</h1>
      <div class="stats">
        {PLAN_STATES_SHOWN.map((state) => (
          <Stat
            href={withQuery('/plan', { ...query, cursor: undefined, state })}
            n={s[state]}
            label={state}
            cls={`state-${state}`}
          />
        ))}
        <Stat href="/plan" n={s.rules} label={`rules${props.filtered ? ' matching' : ''} (${s.disabled} disabled)`} />
      </div>
      {problems.length > 0 ? (
        <p class="problems">
          Enabled rules by problem:{' '}
          {problems.map((p, i) => (
            <>
              {i > 0 ? ' · ' : ''}
              <a href={withQuery('/plan', { ...query, cursor: undefined, problem: p })}>
                {s.byProblem[p]} {PROBLEM_WORDS[p]}
              </a>
            </>
          ))}
        </p>
      ) : null}
      <p class="muted">
        A rule is ready when every source and field it needs has been seen within {page.freshnessHours} h. Below, what
        to connect, once per source, with how many enabled rules it would unblock.
      </p>
      <h2>Fixes by source</h2>
      <Fixes fixes={page.fixes} />
      <h2>ATT&amp;CK coverage</h2>
      <Matrix matrix={matrix} />
      <h2 id="rules">Rules</h2>
      <FilterBar
        action="/plan"
        values={q}
        fields={[
          { kind: 'text', name: 'text', label: 'Search', placeholder: 'title, id or description' },
          { kind: 'select', name: 'state', label: 'State', options: PLAN_STATES.map((x) => [x, x] as const) },
          {
            kind: 'select',
            name: 'problem',
            label: 'Problem',
            options: PLAN_PROBLEMS.map((p) => [p, PROBLEM_WORDS[p]!] as const),
          },
          { kind: 'text', name: 'tag', label: 'Tag', placeholder: 'attack.t1110' },
          { kind: 'text', name: 'source', label: 'Source', placeholder: 'win:cat:process_creation' },
        ]}
      />
      <Table<PlanEntry>
        rows={page.rules}
        rowKey={(r) => r.ruleId}
        empty="No rule matches."
        columns={[
          { header: 'State', cell: (r) => <span class={`state-${r.state}`}>{r.state}</span> },
          {
            header: 'Rule',
            cell: (r) =>
              scope.can('rules:read') ? <a href={`/rules/${encodeURIComponent(r.ruleId)}`}>{r.title}</a> : r.title,
          },
          { header: 'Enabled', cell: (r) => (r.enabled ? 'yes' : 'no') },
          { header: 'Problem', cell: (r) => (r.problem ? PROBLEM_WORDS[r.problem] : '—') },
          { header: 'Lacks', cell: (r) => <Lacks entry={r} /> },
        ]}
      />
      <Pager
        path="/plan"
        query={query}
        nextCursor={page.nextCursor ?? undefined}
        shown={page.rules.length}
        total={s.rules}
      />
    </>
  );
}

const planRoute: PageRoute = {
  method: 'get',
  path: '/plan',
  permission: 'plan:read',
  audit: 'console_detection_plan',
  async handle(c, scope) {
    const raw = Object.fromEntries(Object.entries(c.req.query()).filter(([, value]) => value !== ''));
    const parsed = v.safeParse(PlanPageQuery, raw);
    if (!parsed.success)
      throw new HttpError(
        400,
        'invalid filter',
        parsed.issues.map((i) => `${v.getDotPath(i) ?? 'query'}: ${i.message}`),
      );
    const q = parsed.output;
    await scope.deps.readYourWrites();
    const m = scope.deps.reads;
    const plan = detectionPlan(m.detection, m.sources, scope.deps.now(), scope.deps.config.detection.freshnessHours);
    const { cursor, ...filter } = q;
    const page = planPage(plan, filter, PLAN_TABLE_PAGE, cursor);
    if (!page) throw new HttpError(400, 'invalid query', ['cursor: not a cursor of this list']);
    const filtered = Object.values(filter).some((x) => x !== undefined);
    return scope.render(
      'Detection plan',
      <PlanView scope={scope} q={q} page={page} matrix={attackMatrix(plan.rules)} filtered={filtered} />,
    );
  },
};

/** The detection plan page. */
export const planPages: readonly PageRoute[] = [planRoute];
