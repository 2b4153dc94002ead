import type { AlertView } from '../../../projections/alerts.js';
import { shortTime } from './url.js';

/** A suppressed alert in words: "3 matches suppressed until <time> by user=svc-scan, ip=10.0.0.9". */
export function suppressionText(alert: Pick<AlertView, 'suppression' | 'suppressedCount'>): string | undefined {
  const s = alert.suppression;
  if (!s) return undefined;
  const n = alert.suppressedCount ?? 0;
  const values = s.by.map((f) => `${f}=${valueText(s.values[f])}`).join(', ');
  return `${n} match${n === 1 ? '' : 'es'} suppressed until ${shortTime(s.until)} by ${values}`;
}

function valueText(value: unknown): string {
  if (value === null || value === undefined) return '(none)';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The suppression line of an alert's facts (nothing for an alert its rule did not suppress). */
export function SuppressionFacts(props: { readonly alert: Pick<AlertView, 'suppression' | 'suppressedCount'> }) {
  const text = suppressionText(props.alert);
  if (text === undefined) return null;
  return (
    <>
      <dt>Suppression</dt>
      <dd class="suppression">{text}</dd>
    </>
  );
}
