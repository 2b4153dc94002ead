import { shortTime } from './url.js';

/** One bar of a histogram: its bucket `[startMs, endMs)` and count. */
export type HistogramBucket = readonly [startMs: number, endMs: number, count: number];

/** Props of a histogram over time whose range can be narrowed. */
export interface HistogramProps {
  readonly title: string;
  readonly buckets: readonly HistogramBucket[];
  /** The range drawn (left edge, right edge), which a drag maps onto. */
  readonly sinceMs: number;
  readonly untilMs: number;
  /** Where a bar leads: the same page narrowed to its bucket. */
  readonly zoomHref: (sinceIso: string, untilIso: string) => string;
}

const W = 1200;
const H = 150;
const PAD = { left: 40, right: 8, top: 8, bottom: 22 };

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * A bar chart of counts over time, drawn on the server as SVG. Each bar links to its own bucket (zoom without
 * script); the page's script (`data-histogram`) lets a drag across the plot choose any range: the plot spans
 * `data-since`..`data-until` between x = `data-left` and `data-right` of the viewBox.
 */
export function Histogram(props: HistogramProps) {
  const { sinceMs, untilMs } = props;
  const width = Math.max(1, untilMs - sinceMs);
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const xOf = (ms: number) => PAD.left + (Math.min(Math.max(ms, sinceMs), untilMs) - sinceMs) * (plotW / width);
  const max = Math.max(1, ...props.buckets.map((b) => b[2]));
  const total = props.buckets.reduce((s, b) => s + b[2], 0);
  return (
    <figure class="chart histogram">
      <svg
        viewBox={`0 0 ${W} ${H}`}
        role="img"
        aria-label={props.title}
        data-histogram=""
        data-since={iso(sinceMs)}
        data-until={iso(untilMs)}
        data-left={PAD.left}
        data-right={W - PAD.right}
      >
        <title>{props.title}</title>
        <rect class="plot" x={PAD.left} y={PAD.top} width={plotW} height={plotH} />
        <line class="axis" x1={PAD.left} y1={H - PAD.bottom} x2={W - PAD.right} y2={H - PAD.bottom} />
        <text class="tick" x={PAD.left - 4} y={PAD.top + 8} text-anchor="end">
          {max}
        </text>
        <text class="tick" x={PAD.left - 4} y={H - PAD.bottom} text-anchor="end">
          0
        </text>
        {props.buckets.map(([start, end, count]) => {
          if (count === 0) return null;
          const x = xOf(start);
          const h = (count / max) * plotH;
          const [from, to] = [Math.max(start, sinceMs), Math.min(end, untilMs)];
          return (
            <a href={props.zoomHref(iso(from), iso(to))} class="bar">
              <rect class="series-0" x={x} y={H - PAD.bottom - h} width={Math.max(1, xOf(end) - x - 1)} height={h}>
                <title>{`${shortTime(iso(start))}: ${count}`}</title>
              </rect>
            </a>
          );
        })}
        <rect class="brush" x={PAD.left} y={PAD.top} width="0" height={plotH} />
        <text class="tick" x={PAD.left} y={H - 6} text-anchor="start">
          {shortTime(iso(sinceMs))}
        </text>
        <text class="tick" x={W - PAD.right} y={H - 6} text-anchor="end">
          {shortTime(iso(untilMs))}
        </text>
      </svg>
      <figcaption>
        <span class="chart-title">{props.title}</span> · {total} in {props.buckets.length} bars · drag across the chart
        (or click a bar) to narrow the range
      </figcaption>
    </figure>
  );
}
