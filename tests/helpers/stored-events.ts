import * as v from 'valibot';
import { EVENT_SCHEMAS } from '../../src/events/union.js';
import { formatIssues } from '../../src/kernel/issues.js';

/** What a schema check names: the event's type and data, and where it sits (a seq or a position). */
export interface Checked { readonly type: string; readonly data: unknown; readonly seq?: number }

/** Every way `events` differ from the stored schema of their type, one line each (`seq 12 AlertRaised: evidence[0].time: ...`). */
export function schemaIssues(events: Iterable<Checked>, schemas: Readonly<Record<string, v.GenericSchema>> = EVENT_SCHEMAS): string[] {
  const issues: string[] = [];
  let i = 0;
  for (const e of events) {
    const where = `${e.seq !== undefined ? `seq ${e.seq}` : `#${i}`} ${e.type}`;
    i++;
    const schema = Object.hasOwn(schemas, e.type) ? schemas[e.type] : undefined;
    if (!schema) {
      issues.push(`${where}: no schema for this type`);
      continue;
    }
    const parsed = v.safeParse(schema, e.data);
    if (!parsed.success) issues.push(...formatIssues(parsed.issues, 'data').map((m) => `${where}: ${m}`));
  }
  return issues;
}
