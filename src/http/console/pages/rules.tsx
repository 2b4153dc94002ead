import { stringify } from 'yaml';
import * as v from 'valibot';
import { decideImportRules, decideSetRuleEnabled } from '../../../commands/import-rules.js';
import {
  ClearSuppressionBody,
  SetSuppressionBody,
  decideSetRuleSuppression,
} from '../../../commands/rule-suppression.js';
import { HttpError, parseOr400 } from '../../errors.js';
import { commandContext, executeAudited } from '../../request-context.js';
import {
  effectiveSuppression,
  type DetectionState,
  type InstalledRule,
  type RuleQuarantine,
} from '../../../projections/detection.js';
import { CSRF_FIELD } from '../../web/csrf.js';
import { SeverityBadge } from '../../web/components/badges.js';
import { Table } from '../../web/components/table.js';
import { FilterBar } from '../../web/components/filter-bar.js';
import { shortTime, withQuery } from '../../web/components/url.js';
import { backTo, formFields, optionalField, parseForm } from '../forms.js';
import type { PageRoute, PageScope } from '../page-route.js';
import { qualityAnswer } from '../../../projections/rule-quality-query.js';
import { QualitySection } from './rule-quality.js';

/** The installed rules, as of every write acknowledged before the request. */
async function rules(scope: PageScope): Promise<DetectionState['rules']> {
  await scope.deps.readYourWrites();
  return scope.deps.reads.detection.rules;
}

/** The import form, with the text and the errors of a refused import kept. */
function ImportForm(props: {
  readonly scope: PageScope;
  readonly text?: string;
  readonly errors?: readonly string[];
  readonly message?: string;
}) {
  return (
    <section class="panel" id="import">
      <h2>Import Sigma rules</h2>
      {props.message ? (
        <div class="notice notice-error" role="alert">
          <p>{props.message}</p>
          {props.errors && props.errors.length > 0 ? (
            <ul>
              {props.errors.map((e) => (
                <li>
                  <code>{e}</code>
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
      <form method="post" action="/rules/import">
        <input type="hidden" name={CSRF_FIELD} value={props.scope.csrf} />
        <label for="yaml">One rule, a multi-document stream or a collection (all or nothing):</label>
        <textarea
          id="yaml"
          name="yaml"
          required
          spellcheck={false}
          placeholder={'title: ...\nlogsource: ...\ndetection: ...'}
        >
          {props.text ?? ''}
        </textarea>
        <p>
          <button type="submit">Import</button>
        </p>
      </form>
    </section>
  );
}

/** Rules on one page of the list. */
export const RULES_PAGE_SIZE = 50;

/** The rules list's query: a text search (title, id, name, tag) and the page's offset. */
const RulesQuery = v.object({
  q: optionalField(v.pipe(v.string(), v.trim(), v.maxLength(256))),
  offset: optionalField(
    v.pipe(v.string(), v.regex(/^\d{1,7}$/, 'expected a number of rules to skip'), v.transform(Number)),
  ),
});
type RulesParams = v.InferOutput<typeof RulesQuery>;

/** One page of the rules list: its rules, how many match the search, how many are installed. */
interface RulesListPage {
  readonly rows: InstalledRule[];
  readonly matching: number;
  readonly installed: number;
  readonly offset: number;
}

/** Whether a rule's title, id, Sigma name or one of its tags contains the text (case aside). */
export function ruleMatchesText(r: InstalledRule, text: string): boolean {
  const t = text.toLowerCase();
  const c = r.compiled;
  return (
    c.title.toLowerCase().includes(t) ||
    r.id.toLowerCase().includes(t) ||
    (c.name?.toLowerCase().includes(t) ?? false) ||
    c.tags.some((tag) => tag.toLowerCase().includes(t))
  );
}

/** The rules that match a search, by title, one page of them from `offset`. */
export function rulesPage(all: DetectionState['rules'], q: RulesParams): RulesListPage {
  const matching = sorted(all).filter((r) => q.q === undefined || ruleMatchesText(r, q.q));
  const offset = Math.min(q.offset ?? 0, Math.max(0, matching.length - 1));
  return {
    rows: matching.slice(offset, offset + RULES_PAGE_SIZE),
    matching: matching.length,
    installed: all.size,
    offset,
  };
}

/** The rules list, with search and paging, enable/disable for a rule administrator, and the import form. */
function RulesPage(props: {
  readonly scope: PageScope;
  readonly page: RulesListPage;
  readonly q: RulesParams;
  readonly importText?: string;
  readonly errors?: readonly string[];
  readonly message?: string;
}) {
  const { scope, page, q } = props;
  const writer = scope.can('rules:write');
  const at = (offset: number) => withQuery('/rules', { q: q.q, offset: offset > 0 ? offset : undefined });
  return (
    <>
      <h1>
        Rules <span class="muted">({page.installed.toLocaleString('en')})</span>
      </h1>
      <FilterBar
        action="/rules"
        values={{ q: q.q }}
        fields={[{ kind: 'text', name: 'q', label: 'Search', placeholder: 'title, id, name or tag (attack.t1110)' }]}
      />
      <p class="search-counts" id="rule-counts">
        {q.q !== undefined
          ? `${page.matching.toLocaleString('en')} of ${page.installed.toLocaleString('en')} rules match`
          : `${page.installed.toLocaleString('en')} rules`}
        {page.matching > 0 ? `; ${page.offset + 1}–${page.offset + page.rows.length} shown` : ''}
      </p>
      {writer ? (
        <ImportForm
          scope={scope}
          {...(props.importText !== undefined ? { text: props.importText } : {})}
          {...(props.errors ? { errors: props.errors } : {})}
          {...(props.message ? { message: props.message } : {})}
        />
      ) : null}
      <Table<InstalledRule>
        id="rules"
        keyboard
        rows={page.rows}
        rowKey={(r) => r.id}
        rowHref={(r) => `/rules/${encodeURIComponent(r.id)}`}
        empty={q.q !== undefined ? 'No rule matches this search.' : 'No rule installed.'}
        columns={[
          { header: 'Level', cell: (r) => <SeverityBadge severity={r.compiled.level} /> },
          { header: 'Rule', cell: (r) => <a href={`/rules/${encodeURIComponent(r.id)}`}>{r.compiled.title}</a> },
          { header: 'Kind', cell: (r) => r.compiled.kind },
          { header: 'Source', cell: (r) => r.source },
          { header: 'Imported', cell: (r) => shortTime(r.importedAt) },
          {
            header: 'Enabled',
            cell: (r) =>
              r.quarantine ? (
                <a class="state-quarantined" href={`/rules/${encodeURIComponent(r.id)}#quarantine`}>
                  quarantined
                </a>
              ) : writer ? (
                <form method="post" action={`/rules/${encodeURIComponent(r.id)}/enabled`} class="inline">
                  <input type="hidden" name={CSRF_FIELD} value={scope.csrf} />
                  <input type="hidden" name="enabled" value={r.enabled ? 'false' : 'true'} />
                  {r.enabled ? 'yes ' : 'no '}
                  <button type="submit" class="secondary">
                    {r.enabled ? 'Disable' : 'Enable'}
                  </button>
                </form>
              ) : r.enabled ? (
                'yes'
              ) : (
                'no'
              ),
          },
        ]}
      />
      <nav class="pager" aria-label="Pages">
        {page.offset > 0 ? <a href={at(Math.max(0, page.offset - RULES_PAGE_SIZE))}>Previous page</a> : null}
        {page.offset + RULES_PAGE_SIZE < page.matching ? (
          <a rel="next" href={at(page.offset + RULES_PAGE_SIZE)}>
            Next page
          </a>
        ) : null}
      </nav>
    </>
  );
}

/** A quarantined rule's panel: why, and (for rule_admins) enabling it again with a reason. */
function QuarantinePanel(props: {
  readonly scope: PageScope;
  readonly rule: InstalledRule;
  readonly quarantine: RuleQuarantine;
}) {
  const { scope, rule, quarantine: q } = props;
  return (
    <section class="panel" id="quarantine">
      <h2 class="state-quarantined">Quarantined</h2>
      <p>
        Since {shortTime(q.at)} this rule does not evaluate: {q.reason}.{' '}
        {`Budget ${q.budgetMs} ms, measured ${q.measuredMs} ms over ${q.evaluations} evaluations`}
        {q.sampleEventId ? (
          <>
            , slowest on event <code>{q.sampleEventId}</code>
          </>
        ) : null}
        . Its alert:{' '}
        {scope.can('alerts:read') ? <a href={`/alerts/${encodeURIComponent(q.alertId)}`}>{q.alertId}</a> : q.alertId}.
      </p>
      {scope.can('rules:write') ? (
        <form method="post" action={`/rules/${encodeURIComponent(rule.id)}/enabled`}>
          <input type="hidden" name={CSRF_FIELD} value={scope.csrf} />
          <input type="hidden" name="enabled" value="true" />
          <label>
            Why it may run again (recorded with the change)
            <input type="text" name="reason" required maxlength={4096} />
          </label>
          <button type="submit">Enable again</button>
        </form>
      ) : null}
    </section>
  );
}

const byTitle = new Intl.Collator('en');
const sorted = (m: DetectionState['rules']) =>
  [...m.values()].sort((a, b) => byTitle.compare(a.compiled.title, b.compiled.title) || (a.id < b.id ? -1 : 1));

const listRoute: PageRoute = {
  method: 'get',
  path: '/rules',
  permission: 'rules:read',
  audit: 'console_rules',
  async handle(c, scope) {
    const q = parseOr400(RulesQuery, c.req.query(), 'query');
    return scope.render('Rules', <RulesPage scope={scope} q={q} page={rulesPage(await rules(scope), q)} />);
  },
};

const detailRoute: PageRoute = {
  method: 'get',
  path: '/rules/{id}',
  permission: 'rules:read',
  audit: 'console_rule',
  async handle(c, scope) {
    const rule = (await rules(scope)).get(c.req.param('id')!);
    if (!rule) throw new HttpError(404, `rule ${c.req.param('id')!.slice(0, 128)} is not installed`);
    const comp = rule.compiled;
    const cost = scope.deps.ruleCosts?.of(rule.id);
    return scope.render(
      comp.title,
      <>
        <h1>
          <SeverityBadge severity={comp.level} /> {comp.title}
        </h1>
        <section class="panel">
          <dl class="facts">
            <dt>Id</dt>
            <dd>
              <code>{rule.id}</code>
            </dd>
            <dt>Kind</dt>
            <dd>{comp.kind}</dd>
            <dt>Author</dt>
            <dd>{comp.author ?? '—'}</dd>
            <dt>Enabled</dt>
            <dd>{rule.enabled ? 'yes' : 'no'}</dd>
            <dt>Source</dt>
            <dd>
              {rule.source}
              {rule.importedBy ? ` by ${rule.importedBy}` : ''}, {shortTime(rule.importedAt)}
            </dd>
            <dt>Description</dt>
            <dd>{comp.description ?? '—'}</dd>
            <dt>False positives</dt>
            <dd>{comp.falsepositives.join('; ') || '—'}</dd>
            <dt>Suppression</dt>
            <dd>
              <SuppressionText rule={rule} />
            </dd>
            <dt>Exceptions</dt>
            <dd>
              <a href={`/exceptions?status=active&rule=${encodeURIComponent(rule.id)}`}>
                {scope.deps.reads.exceptions.exceptedByRule.get(rule.id) ?? 0} matches kept from alerting
              </a>
            </dd>
            <dt>Cost on this node</dt>
            <dd>
              {cost
                ? `${cost.evaluations} evaluations, ${cost.matches} matches, ${cost.ms.toFixed(1)} ms`
                : 'not run yet'}
              {scope.deps.ruleCosts ? ` since ${shortTime(scope.deps.ruleCosts.since)}` : ''}
            </dd>
          </dl>
        </section>
        {rule.quarantine ? <QuarantinePanel scope={scope} rule={rule} quarantine={rule.quarantine} /> : null}
        {scope.can('rules:write') ? <SuppressionPanel scope={scope} rule={rule} /> : null}
        <QualitySection
          ruleId={rule.id}
          q={qualityAnswer(scope.deps.reads.ruleQuality.rules.get(rule.id))}
          alerts={scope.can('alerts:read')}
        />
        <h2>Sigma</h2>
        <pre>{stringify(rule.doc)}</pre>
      </>,
    );
  },
};

const ImportFormSchema = v.object({ yaml: v.pipe(v.string(), v.maxLength(256 * 1024)) });

const importRoute: PageRoute = {
  method: 'post',
  path: '/rules/import',
  permission: 'rules:write',
  audit: 'console_import_rules',
  async handle(c, scope) {
    const { yaml } = parseForm(ImportFormSchema, await formFields(c));
    // Browsers send a textarea with CRLF line ends; Sigma YAML reads the same either way.
    const text = yaml.replace(/\r\n/g, '\n');
    try {
      const limits = scope.deps.config.detection.limits;
      const { result } = await executeAudited(
        c,
        scope.deps,
        (m) => decideImportRules(m.detection, text, 'api', limits),
        303,
      );
      return backTo(
        c,
        '/rules',
        `Imported ${result.ruleIds.length} rule${result.ruleIds.length === 1 ? '' : 's'}: ${result.ruleIds.join(', ')}`,
      );
    } catch (err) {
      if (!(err instanceof HttpError) || err.status !== 400) throw err;
      return scope.render(
        'Rules',
        <RulesPage
          scope={scope}
          q={{}}
          page={rulesPage(await rules(scope), {})}
          importText={yaml}
          errors={err.issues ?? []}
          message={err.message}
        />,
        { status: 400 },
      );
    }
  },
};

const EnabledForm = v.object({
  enabled: v.picklist(['true', 'false']),
  reason: optionalField(v.pipe(v.string(), v.trim(), v.maxLength(4096))),
});

const enabledRoute: PageRoute = {
  method: 'post',
  path: '/rules/{id}/enabled',
  permission: 'rules:write',
  audit: 'console_set_rule_enabled',
  async handle(c, scope) {
    const id = c.req.param('id')!;
    const form = parseForm(EnabledForm, await formFields(c));
    const enabled = form.enabled === 'true';
    await executeAudited(c, scope.deps, (m) => decideSetRuleEnabled(m, id, enabled, form.reason), 303);
    return backTo(c, '/rules', `Rule ${id} ${enabled ? 'enabled' : 'disabled'}`);
  },
};

/** The suppression form as posted: `by` as comma- or space-separated field names, or `clear` to clear it. */
const SuppressionForm = v.object({
  by: optionalField(v.pipe(v.string(), v.maxLength(2048))),
  for: optionalField(v.pipe(v.string(), v.trim(), v.maxLength(16))),
  reason: v.optional(v.string(), ''),
  clear: optionalField(v.literal('true')),
});

const suppressionRoute: PageRoute = {
  method: 'post',
  path: '/rules/{id}/suppression',
  permission: 'rules:write',
  audit: 'console_set_rule_suppression',
  async handle(c, scope) {
    const id = c.req.param('id')!;
    const form = parseForm(SuppressionForm, await formFields(c));
    const body =
      form.clear === 'true'
        ? parseForm(ClearSuppressionBody, { reason: form.reason })
        : parseForm(SetSuppressionBody, {
            by: (form.by ?? '').split(/[\s,]+/).filter((f) => f !== ''),
            for: form.for ?? '',
            reason: form.reason,
          });
    const ctx = commandContext(c, scope.deps);
    await executeAudited(c, scope.deps, (m) => decideSetRuleSuppression(m.detection, id, body, ctx), 303);
    return backTo(
      c,
      `/rules/${encodeURIComponent(id)}`,
      form.clear === 'true' ? 'Suppression cleared' : 'Suppression set',
    );
  },
};

/** A rule_admin's form to set the rule's suppression (or clear the one set here), with a reason. */
function SuppressionPanel(props: { readonly scope: PageScope; readonly rule: InstalledRule }) {
  const { scope, rule } = props;
  const s = effectiveSuppression(rule);
  const action = `/rules/${encodeURIComponent(rule.id)}/suppression`;
  return (
    <section class="panel" id="suppression">
      <h2>Suppression</h2>
      <p class="muted">
        Within a window, matches with the same values of the fields grow one alert (its suppressed count) instead of
        raising new ones (docs/detections.md "Suppression").
      </p>
      <form method="post" action={action}>
        <input type="hidden" name={CSRF_FIELD} value={scope.csrf} />
        <label>
          By fields <input name="by" value={s ? s.by.join(', ') : ''} placeholder="sourceEndpoint.ip, actor.user" />
        </label>{' '}
        <label>
          For <input name="for" value={s ? s.for : ''} placeholder="1h" size={6} />
        </label>{' '}
        <label>
          Why <input name="reason" required maxlength={4096} />
        </label>{' '}
        <button type="submit">Set suppression</button>
      </form>
      {s?.source === 'api' ? (
        <form method="post" action={action}>
          <input type="hidden" name={CSRF_FIELD} value={scope.csrf} />
          <input type="hidden" name="clear" value="true" />
          <label>
            Why clear it <input name="reason" required maxlength={4096} />
          </label>{' '}
          <button type="submit" class="secondary">
            Clear the setting
          </button>
        </form>
      ) : null}
    </section>
  );
}

/** The rules pages: list, detail, import, enable/disable, suppression. */
export const rulePages: readonly PageRoute[] = [listRoute, detailRoute, importRoute, enabledRoute, suppressionRoute];

/** A rule's suppression in effect, in words: by which fields, for how long, and where it was set. */
function SuppressionText(props: { readonly rule: InstalledRule }) {
  const s = effectiveSuppression(props.rule);
  if (!s) return <>none (each match joins the open alert of its rule and first system)</>;
  const by = s.by.join(', ');
  return s.source === 'rule' ? (
    <>
      by {by}, for {s.for} (the rule's own <code>suppress:</code>)
    </>
  ) : (
    <>
      by {by}, for {s.for}, set by {s.principal} at {shortTime(s.at)}: {s.reason}
    </>
  );
}
