/** Rules at and over the import limits (issue 57), written as Sigma YAML on Zeek http. */

/** The id of `manyRegexesRule`. */
export const MANY_REGEXES_ID = '57a00000-0000-4000-8000-000000008000';

/** The id of `manyValuesRule`. */
export const MANY_VALUES_ID = '57a00000-0000-4000-8000-000000023600';

/** The i-th regular expression of `manyRegexesRule`. */
export const manyRegex = (i: number) => `^x${i}[a-z]+\\d{2,5}(foo|bar)${i}$`;

/** The i-th value of `manyValuesRule`: a distinct domain-like text. */
export const manyValue = (i: number) => `evil-${i.toString(36)}-${(i * 7919).toString(16)}.example`;

/** A rule whose one `uri|re` entry holds `count` regular expressions (8,000: about 330 KB of YAML). */
export function manyRegexesRule(count = 8000, id = MANY_REGEXES_ID): string {
  const patterns = Array.from({ length: count }, (_, i) => `      - '${manyRegex(i)}'`).join('\n');
  return `title: Many regular expressions
id: ${id}
status: test
logsource: {product: zeek, service: http}
detection:
  sel:
    uri|re:
${patterns}
  condition: sel
level: high
`;
}

/** A rule whose one `uri|contains` entry holds `count` plain values (23,600: about 730 KB of YAML). */
export function manyValuesRule(count = 23_600, id = MANY_VALUES_ID): string {
  const values = Array.from({ length: count }, (_, i) => `      - ${manyValue(i)}`).join('\n');
  return `title: Many values
id: ${id}
status: test
logsource: {product: zeek, service: http}
detection:
  sel:
    uri|contains:
${values}
  condition: sel
level: high
`;
}

/** The id of `HOSTILE_RULE`. */
export const HOSTILE_ID = '57b00000-0000-4000-8000-000000000001';

/**
 * Issue 57's rule that froze the request thread: a lookahead (so V8's linear-time engine cannot run
 * it) and a nested quantifier, on Zeek http's uri; `HOSTILE_URI` makes it backtrack for hours.
 */
export const HOSTILE_RULE = `title: Catastrophic backtracking
id: ${HOSTILE_ID}
status: test
logsource: {product: zeek, service: http}
detection:
  sel:
    uri|re: '^(?!b)(a+)+$'
  condition: sel
level: high
`;

/** 29 `a`s and a `!`: about 20 s of backtracking for `HOSTILE_RULE`, doubling per `a`. */
export const HOSTILE_URI = `${'a'.repeat(29)}!`;
