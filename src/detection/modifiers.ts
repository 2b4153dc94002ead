/**
 * The Sigma value-modifier table (spec appendix "Modifiers", v2.1). Each modifier is one step that
 * refines a `FieldPlan`; `compileFieldTest` (field-test.ts) turns the finished plan and the rule's
 * values into a test. Unsupported modifiers fail with a reason instead of silently never matching.
 */

/** Operators that replace plain (wildcard) matching. */
export type Operator = 're' | 'cidr' | 'exists' | 'gt' | 'gte' | 'lt' | 'lte' | 'fieldref';

/** UTF-16 encodings applied before base64. */
export type Encoding = 'utf16le' | 'utf16be' | 'utf16';

/** Everything the modifier chain of one field entry decided. */
export interface FieldPlan {
  readonly position?: 'contains' | 'startswith' | 'endswith';
  readonly all: boolean;
  readonly cased: boolean;
  readonly windash: boolean;
  readonly neq: boolean;
  readonly encoding?: Encoding;
  readonly base64?: 'base64' | 'base64offset';
  readonly operator?: Operator;
  /** `re` sub-modifiers, in JS flag letters. */
  readonly regexFlags: string;
}

type Step = (plan: FieldPlan) => FieldPlan | string;

/** The plan of a field with no modifiers: case-insensitive wildcard equality, values ORed. */
export const PLAIN: FieldPlan = { all: false, cased: false, windash: false, neq: false, regexFlags: '' };

function position(name: 'contains' | 'startswith' | 'endswith'): Step {
  return (p) =>
    p.position
      ? `'${name}' cannot follow '${p.position}'`
      : p.operator
        ? `'${name}' cannot be combined with '${p.operator}'`
        : { ...p, position: name };
}

function operator(name: Operator): Step {
  return (p) => (p.operator ? `'${name}' cannot be combined with '${p.operator}'` : { ...p, operator: name });
}

function encoding(name: Encoding): Step {
  return (p) =>
    p.encoding
      ? `'${name}' cannot follow '${p.encoding}'`
      : p.base64
        ? `'${name}' must come before '${p.base64}'`
        : { ...p, encoding: name };
}

function base64(name: 'base64' | 'base64offset'): Step {
  return (p) =>
    p.base64
      ? `'${name}' cannot follow '${p.base64}'`
      : p.position
        ? `'${name}' must come before '${p.position}'`
        : { ...p, base64: name };
}

function regexFlag(name: string, flag: string): Step {
  return (p) =>
    p.operator === 're'
      ? { ...p, regexFlags: p.regexFlags.includes(flag) ? p.regexFlags : p.regexFlags + flag }
      : `'${name}' is a sub-modifier of 're' and must follow it`;
}

function unsupported(reason: string): Step {
  return () => reason;
}

/** Every modifier Sigma defines, with what it does here; names absent from this table are unknown. */
export const MODIFIERS: Readonly<Record<string, Step>> = {
  contains: position('contains'),
  startswith: position('startswith'),
  endswith: position('endswith'),
  all: (p) => ({ ...p, all: true }),
  cased: (p) => ({ ...p, cased: true }),
  neq: (p) => (p.neq ? `'neq' given twice` : { ...p, neq: true }),
  windash: (p) => ({ ...p, windash: true }),
  re: operator('re'),
  i: regexFlag('i', 'i'),
  m: regexFlag('m', 'm'),
  s: regexFlag('s', 's'),
  cidr: operator('cidr'),
  exists: operator('exists'),
  gt: operator('gt'),
  gte: operator('gte'),
  lt: operator('lt'),
  lte: operator('lte'),
  fieldref: operator('fieldref'),
  base64: base64('base64'),
  base64offset: base64('base64offset'),
  utf16le: encoding('utf16le'),
  wide: encoding('utf16le'),
  utf16be: encoding('utf16be'),
  utf16: encoding('utf16'),
  expand: unsupported(
    `modifier 'expand' is not supported: placeholders need a processing pipeline, which Vigil does not have`,
  ),
  minute: unsupported(`time modifier 'minute' is not supported`),
  hour: unsupported(`time modifier 'hour' is not supported`),
  day: unsupported(`time modifier 'day' is not supported`),
  week: unsupported(`time modifier 'week' is not supported`),
  month: unsupported(`time modifier 'month' is not supported`),
  year: unsupported(`time modifier 'year' is not supported`),
};

/** Modifiers that change the operator's meaning and so cannot stand beside `cidr`, `exists` or comparisons. */
function checkPlan(p: FieldPlan): string | undefined {
  if (p.base64 && p.windash) return `'windash' cannot be combined with '${p.base64}'`;
  if (p.encoding && !p.base64)
    return (
      `'${p.encoding}' is only supported before 'base64' or 'base64offset' (Vigil events hold text, not UTF-16 ` +
      `bytes)`
    );
  const op = p.operator;
  if (op === undefined) return undefined;
  if (op === 'fieldref')
    return p.position || p.base64 || p.windash ? `'fieldref' supports only 'neq' and 'cased' beside it` : undefined;
  if (p.neq) return `'neq' cannot be combined with '${op}'`;
  if (p.position || p.base64 || p.windash) return `'${op}' cannot be combined with string modifiers`;
  if (op !== 're' && p.cased) return `'cased' has no meaning with '${op}'`;
  return undefined;
}

/** Runs a modifier chain through the table: the plan, or why the chain is unknown, unsupported or contradictory. */
export function planModifiers(modifiers: readonly string[]): FieldPlan | string {
  let plan = PLAIN;
  for (const name of modifiers) {
    const step = Object.hasOwn(MODIFIERS, name) ? MODIFIERS[name] : undefined;
    if (!step) return `unknown modifier '${name}'`;
    const next = step(plan);
    if (typeof next === 'string') return next;
    plan = next;
  }
  return checkPlan(plan) ?? plan;
}
