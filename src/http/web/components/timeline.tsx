import type { Child } from 'hono/jsx';
import { shortTime } from './url.js';

/** One entry of a timeline: when, who, what. */
export interface TimelineEntry {
  readonly at: string;
  readonly title: Child;
  readonly detail?: Child;
  readonly who?: string;
}

/** A vertical timeline, oldest first, each entry a time, a title and its detail. */
export function Timeline(props: {
  readonly entries: readonly TimelineEntry[];
  readonly empty: string;
  readonly label: string;
}) {
  if (props.entries.length === 0) return <p class="empty">{props.empty}</p>;
  return (
    <ol class="timeline" aria-label={props.label}>
      {props.entries.map((e) => (
        <li>
          <time datetime={e.at}>{shortTime(e.at)}</time>
          <div class="tl-body">
            <div class="tl-title">
              {e.title}
              {e.who ? <span class="tl-who"> — {e.who}</span> : null}
            </div>
            {e.detail ? <div class="tl-detail">{e.detail}</div> : null}
          </div>
        </li>
      ))}
    </ol>
  );
}
