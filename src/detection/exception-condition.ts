import type { NormalizedEvent } from '../events/normalized-event.js';
import { mapLogsource, type LogsourceMapping } from './logsources.js';
import { compileDetection } from './match.js';
import type { Trigger } from './prefilter.js';
import { fail, ok, type CompiledSigma, type Result } from './types.js';

/** Bounds of an exception's condition: its JSON size, and the same identifier/entry limits as a rule's. */
export const EXCEPTION_CONDITION_LIMITS = { jsonBytes: 16_384 } as const;

/** An exception's condition compiled for the rules of one logsource: whether an event is excepted. */
export type ExceptionTest = (event: NormalizedEvent) => boolean;

/**
 * A compiled condition: its test, and (when one can be derived: prefilter.ts) the triggers one of which must hold for
 * it to, so a match is tried only against the exceptions whose literals its event contains.
 */
export interface CompiledException {
  readonly test: ExceptionTest;
  readonly triggers?: readonly Trigger[];
}

/** No logsource aliases: a correlation has none, and a condition is checked against raw field names too. */
const PLAIN: LogsourceMapping = { indexKeys: [], aliases: {} };

/**
 * The mapping an exception's condition is read with for `rule`: its logsource's field aliases (`Image`, `User`,
 * `SourceIp`, as the rule itself names them), none for a correlation or an unmapped logsource.
 */
export function mappingFor(rule: CompiledSigma): LogsourceMapping {
  if (rule.kind !== 'detection') return PLAIN;
  const mapped = mapLogsource(rule.logsource);
  return mapped.ok ? mapped.value : PLAIN;
}

/** A key naming a rule's mapping, so one compiled condition serves every rule of a logsource. */
export function mappingKey(rule: CompiledSigma): string {
  if (rule.kind !== 'detection') return '-';
  const ls = rule.logsource;
  return `${ls.product ?? ''}\u0000${ls.category ?? ''}\u0000${ls.service ?? ''}`;
}

/**
 * Compiles an exception's condition (Sigma's detection syntax: search identifiers and a `condition`) against a
 * logsource mapping. Never throws; a condition that is too large or not valid Sigma is a reason.
 */
export function compileExceptionCondition(
  detection: unknown,
  mapping: LogsourceMapping = PLAIN,
): Result<CompiledException> {
  let size: number;
  try {
    size = Buffer.byteLength(JSON.stringify(detection) ?? '');
  } catch {
    return fail('detection: not JSON');
  }
  if (size > EXCEPTION_CONDITION_LIMITS.jsonBytes)
    return fail(`detection: larger than ${EXCEPTION_CONDITION_LIMITS.jsonBytes} bytes`);
  const compiled = compileDetection(detection, mapping);
  if (!compiled.ok) return fail(compiled.error);
  // A lookaround or back-reference has no bound on its cost, and an exception runs on the request thread.
  if (compiled.value.backtracks) return fail('detection: a regular expression needs backtracking (lookaround)');
  const { match, triggers } = compiled.value;
  return ok({ test: (event) => match(event) !== undefined, ...(triggers ? { triggers } : {}) });
}
