import type { QualityAnswer, QualityRow } from '../../../projections/rule-quality-query.js';
import { withQuery } from '../../web/components/url.js';

// How the console shows a rule's quality (the rule page's "Quality" section, the overview's "Noisiest rules").

/** A share as a whole percentage; a dash when there is none. */
export function percent(share: number | null): string {
  return share === null ? '—' : `${Math.round(share * 100)} %`;
}

/** The share of a rule's dispositioned alerts that were `false_positive` or `benign`: the noise analysts found. */
export function noise(q: QualityAnswer): number | null {
  const { false_positive: fp, benign } = q.shares;
  return fp === null || benign === null ? null : fp + benign;
}

/** A duration in seconds as a person reads it (`45 s`, `12 min`, `3.5 h`, `2.1 d`); a dash for none. */
export function duration(seconds: number | null): string {
  if (seconds === null) return '—';
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  if (seconds < 86_400) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86_400).toFixed(1)} d`;
}

/** The rule page's "Quality" section: what analysts concluded about the rule's alerts. */
export function QualitySection(props: {
  readonly ruleId: string;
  readonly q: QualityAnswer;
  readonly alerts: boolean;
}) {
  const { q } = props;
  const href = withQuery('/alerts', { rule: props.ruleId });
  const d = (name: keyof QualityAnswer['dispositions']) => `${q.dispositions[name]} (${percent(q.shares[name])})`;
  return (
    <section class="panel" id="quality">
      <h2>Quality</h2>
      <p class="muted">From the analysts' own verdicts: each alert counts with its latest disposition.</p>
      <dl class="facts">
        <dt>Alerts raised</dt>
        <dd>{props.alerts && q.alertsRaised > 0 ? <a href={href}>{q.alertsRaised}</a> : q.alertsRaised}</dd>
        <dt>Reviewed</dt>
        <dd>{q.alertsReviewed}</dd>
        <dt>True positive</dt>
        <dd>{d('true_positive')}</dd>
        <dt>Benign</dt>
        <dd>{d('benign')}</dd>
        <dt>False positive</dt>
        <dd>{d('false_positive')}</dd>
        <dt>Median time to first review</dt>
        <dd>{duration(q.medianTimeToFirstReviewSeconds)}</dd>
        <dt>Matches excepted</dt>
        <dd>{q.matchesExcepted}</dd>
      </dl>
    </section>
  );
}

/**
 * The overview's "Noisiest rules": the rules that raised the most alerts, then whose alerts analysts most often found
 * false positive or benign, each linking to its rule and its alerts.
 */
export function NoisiestRules(props: {
  readonly rows: readonly QualityRow[];
  readonly rules: boolean;
  readonly alerts: boolean;
}) {
  return (
    <section class="panel" id="noisiest-rules">
      <h2>Noisiest rules</h2>
      {props.rows.length === 0 ? (
        <p class="empty">No rule has raised an alert yet.</p>
      ) : (
        <table class="data">
          <thead>
            <tr>
              <th>Rule</th>
              <th class="num">Alerts raised</th>
              <th class="num">False positive + benign</th>
              <th class="num">Median to first review</th>
            </tr>
          </thead>
          <tbody>
            {props.rows.map((r) => (
              <tr>
                <td>
                  {props.rules && r.installed ? (
                    <a href={`/rules/${encodeURIComponent(r.ruleId)}`}>{r.title}</a>
                  ) : (
                    r.title
                  )}
                </td>
                <td class="num">
                  {props.alerts ? (
                    <a href={withQuery('/alerts', { rule: r.ruleId })}>{r.quality.alertsRaised}</a>
                  ) : (
                    r.quality.alertsRaised
                  )}
                </td>
                <td class="num">{percent(noise(r.quality))}</td>
                <td class="num">{duration(r.quality.medianTimeToFirstReviewSeconds)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
