import { createHash } from 'node:crypto';
import { canonicalJson } from '../kernel/canonical-json.js';
import { fail, LEVELS, ok, type Level, type Result, type RuleMeta } from './types.js';

/** Alert severity (0..10) of each Sigma level; a rule without a level is `medium`. */
export const LEVEL_SEVERITY: Readonly<Record<Level, number>> = {
  informational: 1,
  low: 3,
  medium: 5,
  high: 8,
  critical: 10,
};

const MAX_TEXT = 65_536;
const MAX_SHORT = 256;

/** How errors name a rule: its title, else its id, else a generic label. */
export function ruleLabel(doc: Record<string, unknown>): string {
  const title = doc['title'];
  if (typeof title === 'string' && title.trim() !== '') return `rule "${title.slice(0, 120)}"`;
  const id = doc['id'];
  return typeof id === 'string' && id !== '' ? `rule ${id.slice(0, 120)}` : 'untitled rule';
}

function optionalText(doc: Record<string, unknown>, key: string, max: number): Result<string | undefined> {
  const value = doc[key];
  if (value === undefined || value === null) return ok(undefined);
  if (typeof value !== 'string') return fail(`${key}: expected a string`);
  return value.length > max ? fail(`${key}: longer than ${max} characters`) : ok(value);
}

function textList(doc: Record<string, unknown>, key: string): Result<string[]> {
  const value = doc[key];
  if (value === undefined || value === null) return ok([]);
  const items = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(items) || items.length > 1000) return fail(`${key}: expected a list of strings`);
  const out: string[] = [];
  for (const item of items) {
    // SigmaHQ lists hold the odd number or date; keep them as text rather than reject the rule.
    if (typeof item === 'string') out.push(item.slice(0, MAX_TEXT));
    else if (typeof item === 'number' || typeof item === 'boolean') out.push(String(item));
    else if (item !== null) return fail(`${key}: expected a list of strings`);
  }
  return ok(out);
}

/** A rule's id: its own `id`, else one derived from the document so the same text keeps the same id. */
export function ruleId(doc: Record<string, unknown>): Result<string> {
  const id = doc['id'];
  if (id === undefined || id === null) {
    try {
      return ok(`sigma-${createHash('sha256').update(canonicalJson(doc)).digest('hex').slice(0, 32)}`);
    } catch {
      // Only a hand-built cyclic object gets here; parsed YAML and JSON are trees.
      return fail('id: cannot derive an id from a recursive document; give the rule an id');
    }
  }
  if (typeof id !== 'string' || id.trim() === '' || id.length > MAX_SHORT)
    return fail('id: expected a non-empty string of at most 256 characters');
  return ok(id);
}

function levelOf(doc: Record<string, unknown>): Result<Level> {
  const level = doc['level'];
  if (level === undefined || level === null) return ok('medium');
  const found = LEVELS.find((l) => l === level);
  return found ? ok(found) : fail(`level: expected one of ${LEVELS.join(', ')}`);
}

function optionalTexts(
  doc: Record<string, unknown>,
): Result<Pick<RuleMeta, 'name' | 'author' | 'description' | 'status'>> {
  const out: Record<string, string> = {};
  for (const [key, max] of [
    ['name', MAX_SHORT],
    ['author', MAX_TEXT],
    ['description', MAX_TEXT],
    ['status', MAX_SHORT],
  ] as const) {
    const value = optionalText(doc, key, max);
    if (!value.ok) return fail(value.error);
    if (value.value !== undefined) out[key] = value.value;
  }
  return ok(out);
}

function lists(doc: Record<string, unknown>): Result<Pick<RuleMeta, 'tags' | 'references' | 'falsepositives'>> {
  const tags = textList(doc, 'tags');
  if (!tags.ok) return fail(tags.error);
  const references = textList(doc, 'references');
  if (!references.ok) return fail(references.error);
  const falsepositives = textList(doc, 'falsepositives');
  if (!falsepositives.ok) return fail(falsepositives.error);
  return ok({ tags: tags.value, references: references.value, falsepositives: falsepositives.value });
}

/** Reads and checks the metadata every Sigma document shares (title is required). */
export function readMeta(doc: Record<string, unknown>): Result<RuleMeta> {
  const title = doc['title'];
  if (typeof title !== 'string' || title.trim() === '') return fail('missing title');
  if (title.length > MAX_SHORT) return fail('title: longer than 256 characters');
  const id = ruleId(doc);
  if (!id.ok) return fail(id.error);
  const level = levelOf(doc);
  if (!level.ok) return fail(level.error);
  const texts = optionalTexts(doc);
  if (!texts.ok) return fail(texts.error);
  const listed = lists(doc);
  if (!listed.ok) return fail(listed.error);
  return ok({
    id: id.value,
    title,
    level: level.value,
    severity: LEVEL_SEVERITY[level.value],
    ...listed.value,
    ...texts.value,
  });
}
