import { ALERT_DISPOSITIONS, ALERT_STATUSES } from '../../../projections/alerts.js';

/**
 * The status and the disposition a review sets, as two labelled selects (`status`, `disposition`; none by default):
 * one alert's review preselects what it has, a bulk review starts from `open` and none.
 */
export function ReviewChoices(props: { readonly status?: string; readonly disposition?: string }) {
  return (
    <>
      <label>
        <span>Status</span>
        <select name="status">
          {ALERT_STATUSES.map((s) => (
            <option value={s} selected={s === props.status}>
              {s.replace('_', ' ')}
            </option>
          ))}
        </select>
      </label>
      <label>
        <span>Disposition</span>
        <select name="disposition">
          <option value="">none</option>
          {ALERT_DISPOSITIONS.map((d) => (
            <option value={d} selected={d === props.disposition}>
              {d.replace('_', ' ')}
            </option>
          ))}
        </select>
      </label>
    </>
  );
}
