/** A severity as a coloured badge (`sev-<severity>` in the stylesheet). */
export function SeverityBadge(props: { readonly severity: string }) {
  return <span class={`badge sev-${props.severity}`}>{props.severity}</span>;
}

/** A status as a bordered label (`status-<status>` in the stylesheet). */
export function StatusLabel(props: { readonly status: string }) {
  return <span class={`status status-${props.status}`}>{props.status.replace('_', ' ')}</span>;
}
