/** A path with query parameters, leaving out empty ones, so every list's state fits in a shareable URL. */
export function withQuery(path: string, params: Readonly<Record<string, string | number | undefined>>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

/** An ISO time shortened for a table cell: `2026-11-23 19:05:43Z`. */
export function shortTime(iso: string | undefined): string {
  if (!iso) return '';
  return iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

/** The first `shown` of `names`, joined, and how many more there are of `total` (`a, b +3`). */
export function someOf(names: readonly string[], total: number, shown: number): string {
  return names.slice(0, shown).join(', ') + (total > shown ? ` +${total - shown}` : '');
}
