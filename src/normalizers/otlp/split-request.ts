/**
 * An OTLP/JSON ExportLogsServiceRequest taken apart: how many LogRecords it holds, and one
 * request per LogRecord (with its own resource and scope), so a receiver can keep the readable
 * records of an export and count the others as rejected.
 */

type Obj = Record<string, unknown>;

const isObj = (x: unknown): x is Obj => x !== null && typeof x === 'object' && !Array.isArray(x);
const listOf = (x: unknown): readonly unknown[] | undefined =>
  x === undefined || x === null ? [] : Array.isArray(x) ? x : undefined;

/** The number of LogRecords in a request (parts that are not lists count as none). */
export function countLogRecords(request: Obj): number {
  let n = 0;
  for (const rl of listOf(request['resourceLogs']) ?? []) {
    if (!isObj(rl)) continue;
    for (const sl of listOf(rl['scopeLogs']) ?? []) if (isObj(sl)) n += listOf(sl['logRecords'])?.length ?? 0;
  }
  return n;
}

/** One request per LogRecord with its path in the whole request, or not ok when the envelope itself is unreadable. */
export function splitExportRequest(
  request: Obj,
): { ok: true; requests: Array<{ path: string; request: Obj }> } | { ok: false } {
  const resourceLogs = listOf(request['resourceLogs']);
  if (!resourceLogs) return { ok: false };
  const out: Array<{ path: string; request: Obj }> = [];
  for (const [i, rl] of resourceLogs.entries()) {
    const scopeLogs = isObj(rl) ? listOf(rl['scopeLogs']) : undefined;
    if (!isObj(rl) || !scopeLogs) return { ok: false };
    for (const [j, sl] of scopeLogs.entries()) {
      const logRecords = isObj(sl) ? listOf(sl['logRecords']) : undefined;
      if (!isObj(sl) || !logRecords) return { ok: false };
      for (const [k, lr] of logRecords.entries()) {
        out.push({
          path: `resourceLogs[${i}].scopeLogs[${j}].logRecords[${k}]`,
          request: { resourceLogs: [{ ...rl, scopeLogs: [{ ...sl, logRecords: [lr] }] }] },
        });
      }
    }
  }
  return { ok: true, requests: out };
}
