import { createHash } from 'node:crypto';
import * as v from 'valibot';
import { previewRuleSet, type PreviewResult } from '../../../commands/alerting/rule-preview.js';
import { compileSigma } from '../../../detection/compile.js';
import { huntToSigma, parseHunt } from '../../../detection/hunt/index.js';
import { parseSigmaText } from '../../../detection/sigma-yaml.js';
import type { CompiledSigma } from '../../../detection/types.js';
import { IsoDateTime } from '../../../events/normalized-event.js';
import { epochMillisOf } from '../../../kernel/time.js';
import { HttpError } from '../../errors.js';
import { runPreview } from '../../rule-previews.js';
import { CSRF_FIELD } from '../../web/csrf.js';
import { shortTime, withQuery } from '../../web/components/url.js';
import { formFields, optionalField, parseForm } from '../forms.js';
import { MAX_QUERY_BYTES } from '../hunt-search.js';
import type { PageRoute, PageScope } from '../page-route.js';

/** The query of "save as rule": the hunt and the range its preview runs over. */
const HuntRuleQuery = v.object({
  q: v.pipe(v.string(), v.maxLength(MAX_QUERY_BYTES)),
  since: optionalField(IsoDateTime),
  until: optionalField(IsoDateTime),
});

/** The preview form: the rule as edited and the range. */
const HuntRuleForm = v.object({
  yaml: v.pipe(v.string(), v.minLength(1), v.maxLength(256 * 1024)),
  q: v.optional(v.pipe(v.string(), v.maxLength(MAX_QUERY_BYTES)), ''),
  since: IsoDateTime,
  until: IsoDateTime,
});

/** Matches the preview lists. */
const PREVIEW_MATCHES = 20;

/** A name-based UUID (RFC 9562 version 5) of the query: the same hunt saved twice is the same rule. */
export function ruleIdOf(query: string): string {
  const h = createHash('sha1').update('vigil-hunt\0').update(query).digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/** The rule preview page: the rule's YAML to edit, its preview against history, and importing it. */
function RulePreview(props: {
  readonly scope: PageScope;
  readonly q: string;
  readonly yaml: string;
  readonly since: string;
  readonly until: string;
  readonly preview?: PreviewResult;
  readonly errors?: readonly string[];
}) {
  const { scope } = props;
  return (
    <>
      <h1>Save a hunt as a rule</h1>
      <p>
        From <code>{props.q}</code> · <a href={withQuery('/hunt', { q: props.q })}>back to the hunt</a>
      </p>
      {props.errors && props.errors.length > 0 ? (
        <div class="notice notice-error" role="alert" id="rule-errors">
          <ul>
            {props.errors.map((e) => (
              <li>{e}</li>
            ))}
          </ul>
        </div>
      ) : null}
      <section class="panel" id="rule-preview">
        <form method="post" action="/hunt/rule/preview">
          <input type="hidden" name={CSRF_FIELD} value={scope.csrf} />
          <input type="hidden" name="q" value={props.q} />
          <label for="yaml">Sigma rule (edit it before you preview or import it):</label>
          <textarea id="yaml" name="yaml" required spellcheck={false}>
            {props.yaml}
          </textarea>
          <p>
            <label>
              Since <input type="text" name="since" value={props.since} />
            </label>{' '}
            <label>
              Until <input type="text" name="until" value={props.until} />
            </label>{' '}
            <button type="submit">Preview against history</button>
            {scope.can('rules:write') ? (
              <>
                {' '}
                <button type="submit" formaction="/rules/import">
                  Import as a rule
                </button>
              </>
            ) : null}
          </p>
        </form>
      </section>
      {props.preview ? <PreviewPanel preview={props.preview} /> : null}
    </>
  );
}

function PreviewPanel(props: { readonly preview: PreviewResult }) {
  const p = props.preview;
  return (
    <section class="panel" id="rule-preview-result">
      <h2>What it would have matched</h2>
      <p>
        {p.matchCount} matches in {p.scanned} events from {shortTime(p.since)} to {shortTime(p.until)}
        {p.complete ? '' : ` (incomplete: stopped by its ${p.stoppedBy ?? 'bound'})`}.
      </p>
      <ul>
        {p.matches.map((m) => (
          <li>
            <time datetime={m.time}>{shortTime(m.time)}</time> · {m.groupKey || m.eventIds.join(', ')}
          </li>
        ))}
      </ul>
    </section>
  );
}

const ruleRoute: PageRoute = {
  method: 'get',
  path: '/hunt/rule',
  permission: 'events:read',
  audit: 'console_hunt_rule',
  async handle(c, scope) {
    const parsed = v.safeParse(HuntRuleQuery, c.req.query());
    if (!parsed.success) throw new HttpError(400, 'invalid query', ['q: the hunt to save as a rule']);
    const { q } = parsed.output;
    const now = scope.deps.now().getTime();
    const until = parsed.output.until ?? new Date(now).toISOString();
    const since = parsed.output.since ?? new Date(epochMillisOf(until)! - 86_400_000).toISOString();
    const hunt = parseHunt(q);
    const reasons = hunt.ok
      ? undefined
      : [`the query does not parse: ${hunt.error.message} (at ${hunt.error.position})`];
    const title = `Hunt: ${q.replace(/\s+/g, ' ').trim()}`.slice(0, 200);
    const sigma = hunt.ok ? huntToSigma(hunt.query, { title, id: ruleIdOf(q) }) : undefined;
    if (!sigma?.ok) {
      const why = reasons ?? (sigma && !sigma.ok ? sigma.reasons : []);
      return scope.render(
        'Save as rule',
        <>
          <h1>Save a hunt as a rule</h1>
          <div class="notice notice-error" role="alert" id="rule-errors">
            <p>
              <code>{q}</code> does not map to a Sigma rule:
            </p>
            <ul>
              {why.map((r) => (
                <li>{r}</li>
              ))}
            </ul>
          </div>
          <p>
            <a href={withQuery('/hunt', { q })}>Back to the hunt</a>
          </p>
        </>,
        { status: 400 },
      );
    }
    return scope.render(
      'Save as rule',
      <RulePreview scope={scope} q={q} yaml={sigma.yaml} since={since} until={until} />,
    );
  },
};

/** Compiles the edited YAML: one or more rules, or every reason it does not compile. */
function compiled(yaml: string): { rules: { compiled: CompiledSigma; doc: unknown }[]; errors: string[] } {
  const parsed = parseSigmaText(yaml.replace(/\r\n/g, '\n'));
  if (!parsed.ok) return { rules: [], errors: [parsed.error] };
  if (parsed.docs.length === 0) return { rules: [], errors: ['no rule in the text'] };
  const rules: { compiled: CompiledSigma; doc: unknown }[] = [];
  const errors: string[] = [];
  parsed.docs.forEach((doc, i) => {
    const r = compileSigma(doc);
    if (r.ok) rules.push({ compiled: r.rule, doc });
    else errors.push(`document ${i + 1}: ${r.error}`);
  });
  return { rules, errors };
}

const previewRoute: PageRoute = {
  method: 'post',
  path: '/hunt/rule/preview',
  permission: 'events:read',
  audit: 'console_hunt_rule_preview',
  async handle(c, scope) {
    const form = parseForm(HuntRuleForm, await formFields(c));
    const page = (extra: { preview?: PreviewResult; errors?: readonly string[] }, status: 200 | 400 = 200) =>
      scope.render(
        'Save as rule',
        <RulePreview scope={scope} q={form.q} yaml={form.yaml} since={form.since} until={form.until} {...extra} />,
        { status },
      );
    const [sinceMs, untilMs] = [epochMillisOf(form.since)!, epochMillisOf(form.until)!];
    if (untilMs < sinceMs) return page({ errors: ['until is before since'] }, 400);
    const { rules, errors } = compiled(form.yaml);
    if (errors.length > 0) return page({ errors }, 400);
    await scope.deps.readYourWrites();
    const installed = scope.deps.reads.detection.rules;
    const set = previewRuleSet(
      rules.map((r) => r.compiled),
      new Map([...installed.values()].map((r) => [r.id, r.compiled])),
    );
    const docs = new Map<string, unknown>(rules.map((r) => [r.compiled.id, r.doc]));
    try {
      const preview = await runPreview(
        scope.deps,
        set,
        (r) => docs.get(r.id) ?? installed.get(r.id)!.doc,
        rules.map((r) => r.compiled.id),
        { since: form.since, until: form.until, sinceMs, untilMs },
        { maxEvents: 100_000, maxMatches: PREVIEW_MATCHES },
      );
      return page({ preview });
    } catch (err) {
      if (!(err instanceof HttpError) || err.status >= 500) throw err;
      return page({ errors: [err.message, ...(err.issues ?? [])] }, 400);
    }
  },
};

/** "Save as rule" of the hunt page: the query as Sigma in a rule preview. */
export const huntRulePages: readonly PageRoute[] = [ruleRoute, previewRoute];
