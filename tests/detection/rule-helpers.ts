import assert from 'node:assert/strict';
import { compileSigma, type CompiledRule } from '../../src/detection/compile.js';
import { zeek } from './make-event.js';

/** A Zeek `test`-log rule whose detection is the given selections and condition. */
export function ruleDoc(selections: Record<string, unknown>, condition: unknown = 'sel'): Record<string, unknown> {
  return { title: 'Test rule', logsource: { product: 'zeek', service: 'test' }, detection: { ...selections, condition } };
}

/** Compiles a one-selection rule (`sel: {key: value}`), failing the test if it does not compile. */
export function fieldRule(key: string, value: unknown): CompiledRule {
  const compiled = compileSigma(ruleDoc({ sel: { [key]: value } }));
  assert.ok(compiled.ok, compiled.ok ? '' : compiled.error);
  return compiled.rule as CompiledRule;
}

/** The compile error of a one-selection rule, failing the test if it compiles. */
export function fieldRuleError(key: string, value: unknown): string {
  const compiled = compileSigma(ruleDoc({ sel: { [key]: value } }));
  assert.ok(!compiled.ok, `expected ${key} to be refused`);
  return compiled.error;
}

/** Whether a rule matches a Zeek `test` event with these attributes. */
export function matches(rule: CompiledRule, attributes: Record<string, unknown>): boolean {
  return rule.match(zeek('test', attributes)) !== undefined;
}
