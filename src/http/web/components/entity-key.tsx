import type { Child } from 'hono/jsx';

/** Characters after which an entity key may wrap: the separators of `host:10.0.0.1`, `user:svc@corp`, a path. */
const SEPARATOR = /([:@./\\])/;

/**
 * An entity key that wraps only after its separators (`<wbr>` after `:`, `@`, `.`, `/`, `\`), never inside a token:
 * each token with its separator is one `<span>` the stylesheet keeps whole (`.ekey > span`: `white-space: nowrap`,
 * so not even after the hyphen of `svc-scanner`).
 */
export function EntityKey(props: { readonly k: string; readonly href?: string }) {
  const parts: Child[] = [];
  let token = '';
  for (const piece of props.k.split(SEPARATOR)) {
    token += piece;
    if (SEPARATOR.test(piece)) {
      parts.push(<span>{token}</span>, <wbr />);
      token = '';
    }
  }
  if (token !== '') parts.push(<span>{token}</span>);
  return props.href !== undefined ? (
    <a class="ekey" href={props.href}>
      {parts}
    </a>
  ) : (
    <span class="ekey">{parts}</span>
  );
}

/** The first `shown` of `keys` as entity keys, comma-separated, and how many more there are (`a, b +3`). */
export function EntityKeys(props: {
  readonly keys: readonly string[];
  readonly shown: number;
  readonly total?: number;
  readonly href?: (k: string) => string;
}) {
  const total = props.total ?? props.keys.length;
  const some = props.keys.slice(0, props.shown);
  return (
    <>
      {some.map((k, i) => (
        <>
          {i > 0 ? ', ' : null}
          <EntityKey k={k} {...(props.href ? { href: props.href(k) } : {})} />
        </>
      ))}
      {total > some.length ? <span class="muted"> +{total - some.length}</span> : null}
    </>
  );
}
