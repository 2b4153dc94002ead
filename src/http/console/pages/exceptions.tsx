import { parse, stringify } from 'yaml';
import * as v from 'valibot';
import {
  ChangeExceptionBody,
  CreateExceptionBody,
  RevokeExceptionBody,
  decideChangeException,
  decideCreateException,
  decideRevokeException,
  draftFromAlert,
} from '../../../commands/exceptions.js';
import { lookupEvent } from '../../../projections/evidence.js';
import { exceptionSummary, expiringSoon } from '../../../projections/exception-answers.js';
import { exceptionStatus, scopeCovers, type ExceptionView } from '../../../projections/exceptions.js';
import { HttpError, parseOr400 } from '../../errors.js';
import { commandContext, executeAudited } from '../../request-context.js';
import { previewException, previewRange } from '../../routes/exceptions.js';
import { CSRF_FIELD } from '../../web/csrf.js';
import { Table } from '../../web/components/table.js';
import { Timeline } from '../../web/components/timeline.js';
import { shortTime } from '../../web/components/url.js';
import { backTo, formFields, optionalField, parseForm } from '../forms.js';
import type { PageRoute, PageScope } from '../page-route.js';

/** The states the list page filters by, in the order its tabs show them. */
const TABS = ['active', 'expiring', 'expired', 'revoked'] as const;

async function exceptionsOf(scope: PageScope) {
  await scope.deps.readYourWrites();
  return scope.deps.reads.exceptions;
}

const reminderMs = (scope: PageScope) => scope.deps.config.detection.exceptionReminderHours * 3_600_000;

function scopeText(e: Pick<ExceptionView, 'scope'>): string {
  return e.scope.kind === 'rule'
    ? `rule ${e.scope.ruleId}`
    : e.scope.kind === 'tag'
      ? `tag ${e.scope.tag}`
      : 'all rules';
}

/** The condition as an analyst wrote it: Sigma's detection syntax in YAML. */
const conditionText = (detection: unknown) => stringify(detection).trimEnd();

/** Exceptions a page of the list shows. */
const PAGE = 100;

function ExceptionList(props: {
  scope: PageScope;
  page: { rows: ExceptionView[]; offset: number; total: number };
  tab: string;
  counts: Record<string, number>;
  rule?: string;
}) {
  const nowMs = props.scope.deps.now().getTime();
  const { rows, offset, total } = props.page;
  const ruleQuery = props.rule ? `&rule=${encodeURIComponent(props.rule)}` : '';
  const at = (o: number) => `/exceptions?status=${props.tab}${ruleQuery}&offset=${o}`;
  return (
    <>
      <h1>
        Exceptions
        {props.rule ? (
          <span class="muted">
            {' '}
            covering rule <a href={`/rules/${encodeURIComponent(props.rule)}`}>{props.rule}</a>
          </span>
        ) : null}
      </h1>
      <p class="muted">
        An exception keeps matching events from alerting, for a reason someone answers for, until it expires. What it
        kept is still stored as evidence and counted here.
      </p>
      <nav class="tabs" aria-label="Exceptions by state">
        {TABS.map((t) => (
          <a href={`/exceptions?status=${t}${ruleQuery}`} aria-current={props.tab === t ? 'page' : undefined}>
            {t === 'expiring' ? 'expiring soon' : t} ({props.counts[t] ?? 0})
          </a>
        ))}
      </nav>
      {props.scope.can('exceptions:write') ? (
        <p>
          <a class="button" href="/exceptions/new">
            New exception
          </a>
        </p>
      ) : null}
      <Table
        caption={
          total > rows.length
            ? `${offset + 1}–${offset + rows.length} of ${total} exceptions`
            : `${total} exception${total === 1 ? '' : 's'}`
        }
        rows={rows}
        rowKey={(e) => e.id}
        empty="No exception in this state."
        columns={[
          { header: 'Exception', cell: (e) => <a href={`/exceptions/${encodeURIComponent(e.id)}`}>{e.id}</a> },
          { header: 'Applies to', cell: (e) => scopeText(e) },
          {
            header: 'Condition',
            cell: (e) => (
              <pre class="condition">
                <code>{conditionText(e.detection)}</code>
              </pre>
            ),
          },
          { header: 'Reason', cell: (e) => e.reason },
          { header: 'Owner', cell: (e) => `${e.owner}${e.ticket ? ` · ${e.ticket}` : ''}` },
          {
            header: 'Expires',
            cell: (e) => (e.expiresAt ? shortTime(e.expiresAt) : 'permanent') + ` (${exceptionStatus(e, nowMs)})`,
          },
          { header: 'Matches kept', cell: (e) => e.matchesExcepted.toLocaleString('en'), class: 'num' },
        ]}
      />
      {total > rows.length ? (
        <p>
          {offset > 0 ? <a href={at(Math.max(0, offset - PAGE))}>Previous</a> : null}{' '}
          {offset + rows.length < total ? (
            <a rel="next" href={at(offset + PAGE)}>
              Next
            </a>
          ) : null}
        </p>
      ) : null}
    </>
  );
}

const listRoute: PageRoute = {
  method: 'get',
  path: '/exceptions',
  permission: 'rules:read',
  audit: 'console_exceptions',
  async handle(c, scope) {
    const state = await exceptionsOf(scope);
    const tab = (TABS as readonly string[]).includes(c.req.query('status') ?? '') ? c.req.query('status')! : 'active';
    // `rule`: only the exceptions that cover this installed rule (its id, its tags, or all rules).
    const ruleId = c.req.query('rule');
    const rule = ruleId ? scope.deps.reads.detection.rules.get(ruleId)?.compiled : undefined;
    if (ruleId && !rule) throw new HttpError(404, `rule ${ruleId.slice(0, 128)} is not installed`);
    const nowMs = scope.deps.now().getTime();
    const within = reminderMs(scope);
    const all = [...state.exceptions.values()].reverse().filter((e) => !rule || scopeCovers(e.scope, rule));
    const counts: Record<string, number> = { active: 0, expiring: 0, expired: 0, revoked: 0 };
    const rows: ExceptionView[] = [];
    for (const e of all) {
      const status = exceptionStatus(e, nowMs);
      const soon = expiringSoon(e, nowMs, within);
      counts[status]! += 1;
      if (soon) counts['expiring']! += 1;
      if (tab === 'expiring' ? soon : status === tab) rows.push(e);
    }
    const offset = Math.min(Math.max(0, Number.parseInt(c.req.query('offset') ?? '0', 10) || 0), rows.length);
    const page = { rows: rows.slice(offset, offset + PAGE), offset, total: rows.length };
    return scope.render(
      'Exceptions',
      <ExceptionList scope={scope} page={page} tab={tab} counts={counts} {...(ruleId ? { rule: ruleId } : {})} />,
    );
  },
};

/** The form's fields as typed; the condition is YAML text. */
interface Draft {
  scopeKind: string;
  ruleId: string;
  tag: string;
  condition: string;
  reason: string;
  owner: string;
  ticket: string;
  expiresAt: string;
  permanent: boolean;
  fromAlertId: string;
  /** The exception being changed (its id), or empty for a new one. */
  editing: string;
  /** Why it changes (a change only). */
  comment: string;
}

type Preview = Awaited<ReturnType<typeof previewException>>;

function ExceptionForm(props: { scope: PageScope; draft: Draft; preview?: Preview; errors?: readonly string[] }) {
  const d = props.draft;
  const admin = props.scope.principal.roles.includes('admin');
  return (
    <>
      <h1>{d.editing ? `Change exception ${d.editing}` : 'New exception'}</h1>
      {d.fromAlertId && !d.editing ? (
        <p>
          From alert <a href={`/alerts/${encodeURIComponent(d.fromAlertId)}`}>{d.fromAlertId}</a>: its rule and who or
          where its first event came from, prefilled. Narrow it to what is really expected before saving.
        </p>
      ) : null}
      {props.errors && props.errors.length > 0 ? (
        <div class="notice notice-error" role="alert">
          <p>The exception was not saved:</p>
          <ul>
            {props.errors.map((e) => (
              <li>
                <code>{e}</code>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {props.preview ? <PreviewPanel preview={props.preview} /> : null}
      <form
        method="post"
        action={d.editing ? `/exceptions/${encodeURIComponent(d.editing)}/change` : '/exceptions'}
        class="panel"
        id="exception-form"
      >
        <input type="hidden" name={CSRF_FIELD} value={props.scope.csrf} />
        <input type="hidden" name="fromAlertId" value={d.fromAlertId} />
        <input type="hidden" name="editing" value={d.editing} />
        <fieldset>
          <legend>Applies to</legend>
          <label>
            <input type="radio" name="scopeKind" value="rule" checked={d.scopeKind === 'rule'} /> one rule:{' '}
            <input name="ruleId" value={d.ruleId} size={40} aria-label="rule id" />
          </label>
          <label>
            <input type="radio" name="scopeKind" value="tag" checked={d.scopeKind === 'tag'} /> every rule tagged{' '}
            <input name="tag" value={d.tag} placeholder="attack.t1110" aria-label="tag" />
          </label>
          <label>
            <input type="radio" name="scopeKind" value="all" checked={d.scopeKind === 'all'} /> all rules
          </label>
        </fieldset>
        <label for="condition">Condition (Sigma detection: search identifiers and a condition)</label>
        <textarea id="condition" name="condition" rows={8} spellcheck={false} required>
          {d.condition}
        </textarea>
        <label for="reason">Reason (why these matches are expected)</label>
        <input id="reason" name="reason" value={d.reason} required size={80} />
        <label for="owner">Owner (who answers for it)</label>
        <input id="owner" name="owner" value={d.owner} required />
        <label for="ticket">Ticket (optional)</label>
        <input id="ticket" name="ticket" value={d.ticket} placeholder="CHG-123" />
        <label for="expiresAt">Expires at (ISO 8601, UTC)</label>
        <input id="expiresAt" name="expiresAt" value={d.expiresAt} placeholder="2026-12-20T00:00:00Z" />
        {admin ? (
          <label>
            <input type="checkbox" name="permanent" value="true" checked={d.permanent} /> permanent (no expiry; admins
            only)
          </label>
        ) : null}
        {d.editing ? (
          <>
            <label for="comment">Why it changes (kept in its history)</label>
            <input id="comment" name="comment" value={d.comment} size={80} />
          </>
        ) : null}
        <p>
          <button type="submit" formaction="/exceptions/preview" class="secondary">
            Preview against history
          </button>{' '}
          <button type="submit">{d.editing ? 'Save the change' : 'Save exception'}</button>
        </p>
      </form>
    </>
  );
}

function PreviewPanel(props: { preview: Preview }) {
  const p = props.preview;
  return (
    <section class="panel" id="preview" aria-label="Preview">
      <h2>Over the stored history</h2>
      <p>
        From {shortTime(p.since)} to {shortTime(p.until)}, this exception would have removed{' '}
        <strong>{p.alerts.removed}</strong> of {p.alerts.inScope} alerts of the rules it covers, and{' '}
        <strong>{p.matches.removed}</strong> matches in {p.matches.scanned.toLocaleString('en')} stored events
        {p.matches.complete ? '' : ` (stopped by ${p.matches.stoppedBy ?? 'a bound'}; the counts are a lower bound)`}.
      </p>
      {p.warning ? (
        <div class="notice notice-error" role="alert">
          <p>{p.warning}</p>
          <ul>
            {p.truePositives.slice(0, 20).map((t) => (
              <li>
                <a href={`/alerts/${encodeURIComponent(t.alertId)}`}>{t.title}</a>
                {t.reviewedBy ? ` — reviewed by ${t.reviewedBy}` : ''}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {p.alerts.removedIds.length > 0 ? (
        <p class="muted">
          Alerts it would have removed:{' '}
          {p.alerts.removedIds.slice(0, 20).map((id) => (
            <>
              <a href={`/alerts/${encodeURIComponent(id)}`}>{id}</a>{' '}
            </>
          ))}
        </p>
      ) : null}
    </section>
  );
}

const blankDraft = (scope: PageScope): Draft => ({
  scopeKind: 'rule',
  ruleId: '',
  tag: '',
  condition: 'selection:\n  actor.user: \ncondition: selection',
  reason: '',
  owner: scope.principal.id,
  ticket: '',
  expiresAt: new Date(scope.deps.now().getTime() + 7 * 86_400_000).toISOString(),
  permanent: false,
  fromAlertId: '',
  editing: '',
  comment: '',
});

const newRoute: PageRoute = {
  method: 'get',
  path: '/exceptions/new',
  permission: 'exceptions:write',
  audit: 'console_new_exception',
  async handle(c, scope) {
    await scope.deps.readYourWrites();
    const alertId = c.req.query('fromAlert');
    let draft = blankDraft(scope);
    if (alertId) {
      const alert = scope.deps.reads.alerts.alerts.get(alertId.slice(0, 128));
      if (!alert) throw new HttpError(404, `alert ${alertId.slice(0, 128)} does not exist`);
      const first = alert.evidence[0];
      const event = first ? lookupEvent(scope.deps.reads, first.eventId) : undefined;
      const d = draftFromAlert(alert, event, scope.principal.id, scope.deps.now().toISOString());
      draft = { ...draft, ruleId: alert.ruleId, condition: conditionText(d.detection), fromAlertId: alert.id };
    }
    return scope.render('New exception', <ExceptionForm scope={scope} draft={draft} />);
  },
};

const Text = (max: number) => v.optional(v.pipe(v.string(), v.maxLength(max)), '');

/** The form as posted: everything as text, turned into the API's body by `bodyOf`. */
const ExceptionFormFields = v.object({
  scopeKind: v.picklist(['rule', 'tag', 'all']),
  ruleId: Text(256),
  tag: Text(128),
  condition: v.pipe(v.string(), v.maxLength(16_384)),
  reason: Text(4096),
  owner: Text(256),
  ticket: Text(128),
  expiresAt: Text(64),
  permanent: optionalField(v.literal('true')),
  fromAlertId: Text(128),
  editing: Text(128),
  comment: Text(4096),
});

function draftOf(f: v.InferOutput<typeof ExceptionFormFields>): Draft {
  return { ...f, permanent: f.permanent === 'true' };
}

/** The API's body of a posted form; a condition that is not YAML, or a field out of shape, is a list of issues. */
function bodyOf(d: Draft): { body?: v.InferOutput<typeof CreateExceptionBody>; errors: string[] } {
  let detection: unknown;
  try {
    detection = parse(d.condition, { maxAliasCount: 0 });
  } catch (err) {
    return { errors: [`condition: not YAML (${(err as Error).message.split('\n')[0]})`] };
  }
  const raw = {
    scope:
      d.scopeKind === 'rule'
        ? { kind: 'rule', ruleId: d.ruleId }
        : d.scopeKind === 'tag'
          ? { kind: 'tag', tag: d.tag }
          : { kind: 'all' },
    detection,
    reason: d.reason,
    owner: d.owner,
    ...(d.ticket.trim() !== '' ? { ticket: d.ticket } : {}),
    ...(d.expiresAt.trim() !== '' && !d.permanent ? { expiresAt: d.expiresAt.trim() } : {}),
    ...(d.permanent ? { permanent: true } : {}),
    ...(d.fromAlertId !== '' ? { fromAlertId: d.fromAlertId } : {}),
  };
  const parsed = v.safeParse(CreateExceptionBody, raw);
  if (!parsed.success)
    return {
      errors: parsed.issues.map((i) => `${i.path?.map((p) => String(p.key)).join('.') ?? 'form'}: ${i.message}`),
    };
  return { body: parsed.output, errors: [] };
}

const previewRoute: PageRoute = {
  method: 'post',
  path: '/exceptions/preview',
  permission: 'exceptions:write',
  audit: 'console_preview_exception',
  async handle(c, scope) {
    const draft = draftOf(parseForm(ExceptionFormFields, await formFields(c)));
    const { body, errors } = bodyOf(draft);
    if (!body)
      return scope.render(formTitle(draft), <ExceptionForm scope={scope} draft={draft} errors={errors} />, {
        status: 400,
      });
    try {
      const preview = await previewException(scope.deps, body, previewRange(scope.deps, {}));
      return scope.render(formTitle(draft), <ExceptionForm scope={scope} draft={draft} preview={preview} />);
    } catch (err) {
      if (!(err instanceof HttpError)) throw err;
      const issues = [err.message, ...((err as { issues?: string[] }).issues ?? [])];
      return scope.render(formTitle(draft), <ExceptionForm scope={scope} draft={draft} errors={issues} />, {
        status: 400,
      });
    }
  },
};

const formTitle = (d: Draft) => (d.editing ? `Change exception ${d.editing}` : 'New exception');

/** The terms of an exception as the form shows them, to change or renew it. */
function draftOfException(e: ExceptionView): Draft {
  return {
    scopeKind: e.scope.kind,
    ruleId: e.scope.kind === 'rule' ? e.scope.ruleId : '',
    tag: e.scope.kind === 'tag' ? e.scope.tag : '',
    condition: conditionText(e.detection),
    reason: e.reason,
    owner: e.owner,
    ticket: e.ticket ?? '',
    expiresAt: e.expiresAt ?? '',
    permanent: e.expiresAt === undefined,
    fromAlertId: '',
    editing: e.id,
    comment: '',
  };
}

const editRoute: PageRoute = {
  method: 'get',
  path: '/exceptions/{exceptionId}/edit',
  permission: 'exceptions:write',
  audit: 'console_edit_exception',
  async handle(c, scope) {
    const id = c.req.param('exceptionId')!;
    const e = (await exceptionsOf(scope)).exceptions.get(id);
    if (!e) throw new HttpError(404, `exception ${id.slice(0, 128)} does not exist`);
    if (e.revokedAt !== undefined)
      throw new HttpError(409, `exception ${id.slice(0, 128)} was revoked; make a new one`);
    const draft = draftOfException(e);
    return scope.render(formTitle(draft), <ExceptionForm scope={scope} draft={draft} />);
  },
};

const changeRoute: PageRoute = {
  method: 'post',
  path: '/exceptions/{exceptionId}/change',
  permission: 'exceptions:write',
  audit: 'console_change_exception',
  async handle(c, scope) {
    const id = c.req.param('exceptionId')!;
    const draft = { ...draftOf(parseForm(ExceptionFormFields, await formFields(c))), editing: id };
    const render = (issues: readonly string[]) =>
      scope.render(formTitle(draft), <ExceptionForm scope={scope} draft={draft} errors={issues} />, { status: 400 });
    const { body, errors } = bodyOf(draft);
    if (!body) return render(errors);
    const { fromAlertId: _f, ...terms } = body;
    const change = v.safeParse(ChangeExceptionBody, { ...terms, comment: draft.comment });
    if (!change.success) return render(['comment: why it changes is required']);
    const ctx = commandContext(c, scope.deps);
    const who = { mayBePermanent: scope.principal.roles.includes('admin') };
    try {
      await executeAudited(c, scope.deps, (m) => decideChangeException(m, id, change.output, ctx, who), 303);
      return backTo(c, `/exceptions/${encodeURIComponent(id)}`, `Exception ${id} changed`);
    } catch (err) {
      if (!(err instanceof HttpError) || err.status !== 400) throw err;
      return render([err.message, ...((err as { issues?: string[] }).issues ?? [])]);
    }
  },
};

const createRoute: PageRoute = {
  method: 'post',
  path: '/exceptions',
  permission: 'exceptions:write',
  audit: 'console_create_exception',
  async handle(c, scope) {
    const draft = draftOf(parseForm(ExceptionFormFields, await formFields(c)));
    const { body, errors } = bodyOf(draft);
    const render = (issues: readonly string[]) =>
      scope.render('New exception', <ExceptionForm scope={scope} draft={draft} errors={issues} />, { status: 400 });
    if (!body) return render(errors);
    const ctx = commandContext(c, scope.deps);
    const who = { mayBePermanent: scope.principal.roles.includes('admin') };
    try {
      const { result } = await executeAudited(c, scope.deps, (m) => decideCreateException(m, body, ctx, who), 303);
      return backTo(c, `/exceptions/${encodeURIComponent(result.id)}`, `Exception ${result.id} saved`);
    } catch (err) {
      if (!(err instanceof HttpError) || err.status !== 400) throw err;
      return render([err.message, ...((err as { issues?: string[] }).issues ?? [])]);
    }
  },
};

function ExceptionPage(props: { scope: PageScope; e: ExceptionView }) {
  const { e, scope } = props;
  const s = exceptionSummary(e, scope.deps.now().getTime());
  return (
    <>
      <h1>
        Exception {e.id} <span class="muted">({s.status})</span>
      </h1>
      <section class="panel">
        <dl class="facts">
          <dt>Applies to</dt>
          <dd>
            {e.scope.kind === 'rule' ? (
              <a href={`/rules/${encodeURIComponent(e.scope.ruleId)}`}>{scopeText(e)}</a>
            ) : (
              scopeText(e)
            )}
          </dd>
          <dt>Condition</dt>
          <dd>
            <pre class="condition">
              <code>{conditionText(e.detection)}</code>
            </pre>
          </dd>
          <dt>Reason</dt>
          <dd>{e.reason}</dd>
          <dt>Owner</dt>
          <dd>{e.owner}</dd>
          <dt>Ticket</dt>
          <dd>{e.ticket ?? '—'}</dd>
          <dt>Expires</dt>
          <dd>{e.expiresAt ? shortTime(e.expiresAt) : 'permanent'}</dd>
          <dt>Made</dt>
          <dd>
            {shortTime(e.createdAt)} by {e.createdBy}
            {e.fromAlertId ? (
              <>
                {' '}
                from alert <a href={`/alerts/${encodeURIComponent(e.fromAlertId)}`}>{e.fromAlertId}</a>
              </>
            ) : null}
          </dd>
          <dt>Matches kept from alerting</dt>
          <dd>
            {e.matchesExcepted.toLocaleString('en')}
            {e.lastExceptedAt ? `, the last at ${shortTime(e.lastExceptedAt)}` : ''}
            {Object.keys(e.byRule).length > 0 ? (
              <ul>
                {Object.entries(e.byRule).map(([rule, n]) => (
                  <li>
                    <a href={`/rules/${encodeURIComponent(rule)}`}>{rule}</a>: {n}
                  </li>
                ))}
              </ul>
            ) : null}
          </dd>
        </dl>
      </section>
      {s.status !== 'revoked' && scope.can('exceptions:write') ? (
        <p>
          <a class="button secondary" href={`/exceptions/${encodeURIComponent(e.id)}/edit`}>
            {s.status === 'expired' ? 'Renew' : 'Change or renew'}
          </a>
        </p>
      ) : null}
      {s.status !== 'revoked' && scope.can('exceptions:write') ? (
        <form method="post" action={`/exceptions/${encodeURIComponent(e.id)}/revoke`} class="panel">
          <input type="hidden" name={CSRF_FIELD} value={scope.csrf} />
          <label for="comment">End it now, because</label>
          <input id="comment" name="comment" required size={60} />
          <button type="submit" class="secondary">
            Revoke
          </button>
        </form>
      ) : null}
      <h2>History</h2>
      <section class="panel">
        <Timeline
          label="Exception history"
          empty="No history."
          entries={e.history.map((h) => ({
            at: h.at,
            title:
              h.kind === 'reminded'
                ? `reminder raised (alert ${h.alertId ?? ''})`
                : h.kind === 'expired'
                  ? 'expired'
                  : h.kind,
            ...(h.principal ? { who: h.principal } : {}),
            ...(h.comment || h.terms
              ? {
                  detail: (
                    <>
                      {h.comment ? <p>{h.comment}</p> : null}
                      {h.terms ? (
                        <p class="muted">
                          {scopeText(h.terms)}; until {h.terms.expiresAt ?? 'permanent'}; {h.terms.reason}
                        </p>
                      ) : null}
                    </>
                  ),
                }
              : {}),
          }))}
        />
      </section>
    </>
  );
}

const detailRoute: PageRoute = {
  method: 'get',
  path: '/exceptions/{exceptionId}',
  permission: 'rules:read',
  audit: 'console_exception',
  async handle(c, scope) {
    const id = c.req.param('exceptionId')!;
    const e = (await exceptionsOf(scope)).exceptions.get(id);
    if (!e) throw new HttpError(404, `exception ${id.slice(0, 128)} does not exist`);
    return scope.render(`Exception ${e.id}`, <ExceptionPage scope={scope} e={e} />);
  },
};

const revokeRoute: PageRoute = {
  method: 'post',
  path: '/exceptions/{exceptionId}/revoke',
  permission: 'exceptions:write',
  audit: 'console_revoke_exception',
  async handle(c, scope) {
    const id = c.req.param('exceptionId')!;
    const body = parseOr400(RevokeExceptionBody, await formFields(c), 'form');
    const ctx = commandContext(c, scope.deps);
    await executeAudited(c, scope.deps, (m) => decideRevokeException(m, id, body, ctx), 303);
    return backTo(c, `/exceptions/${encodeURIComponent(id)}`, `Exception ${id} revoked`);
  },
};

/** The exceptions pages: the list by state, a new one (from an alert), its preview, its detail and revocation. */
export const exceptionPages: readonly PageRoute[] = [
  listRoute,
  newRoute,
  previewRoute,
  createRoute,
  detailRoute,
  editRoute,
  changeRoute,
  revokeRoute,
];
