import type * as v from 'valibot';

/** Formats valibot issues as `records[3].severity: message`, with the path in JavaScript notation. */
export function formatIssues(issues: readonly v.BaseIssue<unknown>[], root = ''): string[] {
  const out: string[] = [];
  for (const issue of issues) {
    let path = root;
    for (const item of issue.path ?? []) {
      const key = (item as { key: unknown }).key;
      path +=
        typeof key === 'number'
          ? `[${key}]`
          : /^[A-Za-z_$][\w$]*$/.test(String(key))
            ? `${path ? '.' : ''}${String(key)}`
            : `[${JSON.stringify(String(key))}]`;
    }
    out.push(`${path || '(body)'}: ${issue.message}`);
    if (out.length >= 100) {
      out.push(`... and ${issues.length - 100} more`);
      break;
    }
  }
  return out;
}
