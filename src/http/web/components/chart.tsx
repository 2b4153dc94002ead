/** One series of a chart: a name (its legend) and one value per bucket. */
export interface Series {
  readonly name: string;
  readonly values: readonly number[];
}

/** Props of a stacked bar chart over time buckets. */
export interface StackedBarsProps {
  readonly title: string;
  /** One label per bucket (the first, middle and last are drawn under the axis). */
  readonly buckets: readonly string[];
  readonly series: readonly Series[];
  /** CSS class of each series by name (`sev-high`), else `series-<index>`. */
  readonly classOf?: (name: string, index: number) => string;
}

const W = 640;
const H = 180;
const PAD = { left: 40, right: 8, top: 8, bottom: 22 };

/**
 * A stacked bar chart drawn on the server as SVG (no script, colours from the stylesheet's
 * classes), with a `<title>` per bar so a pointer or a screen reader gets the numbers.
 */
export function StackedBars(props: StackedBarsProps) {
  const n = props.buckets.length;
  const totals = props.buckets.map((_, i) => props.series.reduce((s, x) => s + (x.values[i] ?? 0), 0));
  const max = Math.max(1, ...totals);
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const bw = n > 0 ? plotW / n : plotW;
  const cls = props.classOf ?? ((_: string, i: number) => `series-${i % 8}`);
  const labelled = n > 0 ? [0, Math.floor(n / 2), n - 1] : [];
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={props.title}>
        <title>{props.title}</title>
        <line class="axis" x1={PAD.left} y1={H - PAD.bottom} x2={W - PAD.right} y2={H - PAD.bottom} />
        <text class="tick" x={PAD.left - 4} y={PAD.top + 8} text-anchor="end">
          {max}
        </text>
        <text class="tick" x={PAD.left - 4} y={H - PAD.bottom} text-anchor="end">
          0
        </text>
        {props.buckets.map((label, i) => {
          let y = H - PAD.bottom;
          return props.series.map((s, si) => {
            const v = s.values[i] ?? 0;
            if (v === 0) return null;
            const h = (v / max) * plotH;
            y -= h;
            return (
              <rect class={cls(s.name, si)} x={PAD.left + i * bw + 1} y={y} width={Math.max(1, bw - 2)} height={h}>
                <title>{`${label}: ${s.name} ${v}`}</title>
              </rect>
            );
          });
        })}
        {labelled.map((i) => (
          <text class="tick" x={PAD.left + i * bw + bw / 2} y={H - 6} text-anchor="middle">
            {props.buckets[i]}
          </text>
        ))}
      </svg>
      <figcaption>
        <span class="chart-title">{props.title}</span>
        <ul class="legend">
          {props.series.map((s, si) => (
            <li>
              <svg class="swatch" viewBox="0 0 10 10" aria-hidden="true">
                <rect class={cls(s.name, si)} width="10" height="10" />
              </svg>
              {s.name} ({s.values.reduce((a, b) => a + b, 0)})
            </li>
          ))}
        </ul>
      </figcaption>
    </figure>
  );
}

/** Horizontal bars of labelled values (systems, sources), longest first as given. */
export function HorizontalBars(props: {
  readonly title: string;
  readonly rows: readonly { readonly label: string; readonly value: number; readonly note?: string }[];
}) {
  const max = Math.max(1, ...props.rows.map((r) => r.value));
  const rowH = 22;
  const h = Math.max(rowH, props.rows.length * rowH);
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${W} ${h}`} role="img" aria-label={props.title}>
        <title>{props.title}</title>
        {props.rows.map((r, i) => (
          <g>
            <text class="label" x="0" y={i * rowH + 15}>
              {r.label.length > 28 ? `${r.label.slice(0, 27)}…` : r.label}
            </text>
            <rect
              class="series-0"
              x="200"
              y={i * rowH + 4}
              width={Math.max(1, ((W - 440) * r.value) / max)}
              height={rowH - 8}
            >
              <title>{`${r.label}: ${r.value}${r.note ? ` (${r.note})` : ''}`}</title>
            </rect>
            <text class="value" x={204 + ((W - 440) * r.value) / max} y={i * rowH + 15}>
              {r.value}
              {r.note ? ` · ${r.note}` : ''}
            </text>
          </g>
        ))}
      </svg>
      <figcaption>
        <span class="chart-title">{props.title}</span>
      </figcaption>
    </figure>
  );
}
