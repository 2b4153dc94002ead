import { cut, IntelFormatError } from './normalize.js';
import { stixPatternTerms } from './stix-pattern.js';
import type { Indicator, IndicatorSet, RelatedObject, UnsupportedIndicator } from './types.js';

/**
 * STIX 2.1 bundles (issue 60): every `indicator` object with a STIX pattern becomes an Indicator (or an
 * UnsupportedIndicator with the reason), named by the objects its relationships point at. The TAXII client reuses
 * it on each page of a collection's `objects`.
 */

/** Bounds on one document: how many objects, and how long a name or label may be. */
export interface StixBundleLimits {
  readonly maxObjects: number;
}

/** The default bounds: 1,000,000 objects (a TAXII page is far smaller; a bundle file may hold a whole feed). */
export const DEFAULT_STIX_BUNDLE_LIMITS: StixBundleLimits = { maxObjects: 1_000_000 };

/** The STIX object types an indicator may relate to, named in a match's explanation. */
export const RELATED_TYPES: ReadonlySet<string> = new Set([
  'malware',
  'threat-actor',
  'intrusion-set',
  'campaign',
  'attack-pattern',
  'tool',
  'infrastructure',
]);

/** Who may use a malware, tool or infrastructure, and so stand behind an indicator of it. */
const USERS = new Set(['threat-actor', 'intrusion-set', 'campaign']);

type Obj = Record<string, unknown>;
interface Relationship {
  readonly type: string;
  readonly source: string;
  readonly target: string;
}

const isObj = (x: unknown): x is Obj => typeof x === 'object' && x !== null && !Array.isArray(x);
const str = (x: unknown, max = 1024): string | undefined => (typeof x === 'string' ? cut(x, max) : undefined);
const isTime = (x: unknown): x is string => typeof x === 'string' && x.length <= 64 && !Number.isNaN(Date.parse(x));

/** The objects array of a bundle, a TAXII envelope (`{objects, more, next}`) or a bare array. */
function objectsOf(json: unknown, limits: StixBundleLimits): unknown[] {
  let objects: unknown;
  if (Array.isArray(json)) objects = json;
  else if (isObj(json) && (json['type'] === 'bundle' || (json['type'] === undefined && 'objects' in json))) {
    objects = json['objects'] ?? [];
  } else if (isObj(json) && typeof json['type'] === 'string') {
    throw new IntelFormatError(
      `not a STIX bundle: a single '${cut(json['type'], 64)}' object (expected type 'bundle')`,
    );
  } else {
    throw new IntelFormatError('not a STIX bundle: expected {"type": "bundle", "objects": [...]}');
  }
  if (!Array.isArray(objects)) throw new IntelFormatError("not a STIX bundle: 'objects' is not an array");
  if (objects.length > limits.maxObjects) {
    throw new IntelFormatError(`the bundle holds ${objects.length} objects, more than ${limits.maxObjects}`);
  }
  return objects;
}

/** The related objects of each indicator, and of their neighbours one hop away (see relatedOf). */
function graph(objects: readonly unknown[]) {
  const named = new Map<string, RelatedObject>();
  const out = new Map<string, Relationship[]>();
  const into = new Map<string, Relationship[]>();
  const push = (m: Map<string, Relationship[]>, k: string, r: Relationship) => {
    const list = m.get(k);
    if (list) list.push(r);
    else m.set(k, [r]);
  };
  for (const o of objects) {
    if (!isObj(o) || typeof o['id'] !== 'string' || typeof o['type'] !== 'string') continue;
    if (RELATED_TYPES.has(o['type'])) {
      named.set(o['id'], { type: o['type'], name: str(o['name'], 256) ?? o['id'], id: o['id'] });
    } else if (o['type'] === 'relationship') {
      const [type, source, target] = [o['relationship_type'], o['source_ref'], o['target_ref']];
      if (typeof type !== 'string' || typeof source !== 'string' || typeof target !== 'string') continue;
      const r = { type, source, target };
      push(out, source, r);
      push(into, target, r);
    }
  }
  return { named, out, into };
}

/**
 * What an indicator names: the objects it `indicates`, then one hop from each of those, where the link says who is
 * behind it: what the object is `attributed-to`, what is `attributed-to` it (APT1's intrusion set, attributed to the
 * threat actor an indicator indicates), and the threat actors, intrusion sets and campaigns that `uses` an indicated
 * malware, tool or infrastructure. Objects of other types, or not in the document, are not named.
 */
function relatedOf(id: string, g: ReturnType<typeof graph>): RelatedObject[] {
  const found = new Map<string, RelatedObject>();
  const add = (ref: string) => {
    const o = g.named.get(ref);
    if (o && !found.has(ref)) found.set(ref, o);
  };
  const direct = (g.out.get(id) ?? []).filter((r) => r.type === 'indicates').map((r) => r.target);
  direct.forEach(add);
  for (const ref of direct) {
    const object = g.named.get(ref);
    if (!object) continue;
    for (const r of g.out.get(ref) ?? []) if (r.type === 'attributed-to') add(r.target);
    for (const r of g.into.get(ref) ?? []) {
      const by = g.named.get(r.source);
      if (r.type === 'attributed-to') add(r.source);
      else if (r.type === 'uses' && by && USERS.has(by.type) && !USERS.has(object.type)) add(r.source);
    }
  }
  return [...found.values()];
}

function labelsOf(o: Obj): string[] | undefined {
  const all = [o['labels'], o['indicator_types']].flatMap((x) => (Array.isArray(x) ? x : []));
  const labels = [...new Set(all.filter((l): l is string => typeof l === 'string').map((l) => cut(l, 256)))];
  return labels.length > 0 ? labels.slice(0, 100) : undefined;
}

/** One indicator object as an Indicator, or why it is not one. */
function readIndicator(o: Obj, index: number, g: ReturnType<typeof graph>): Indicator | UnsupportedIndicator {
  const id = typeof o['id'] === 'string' ? cut(o['id'], 256) : `indicator#${index}`;
  const pattern = o['pattern'];
  const source = typeof pattern === 'string' ? pattern : '';
  const refuse = (reason: string): UnsupportedIndicator => ({ id, source: cut(source), reason });
  if (typeof pattern !== 'string') return refuse("the indicator has no 'pattern' string");
  const patternType = o['pattern_type'] ?? 'stix';
  if (patternType !== 'stix') {
    return refuse(`pattern_type '${cut(String(patternType), 64)}' is not supported: Vigil evaluates STIX patterns`);
  }
  for (const field of ['valid_from', 'valid_until'] as const) {
    if (o[field] !== undefined && !isTime(o[field])) return refuse(`${field} is not a timestamp`);
  }
  const terms = stixPatternTerms(pattern);
  if (!terms.ok) return refuse(terms.reason);
  const confidence = o['confidence'];
  const related = relatedOf(id, g);
  return {
    id,
    anyOf: terms.anyOf,
    source: pattern,
    ...(isTime(o['valid_from']) ? { validFrom: o['valid_from'] } : {}),
    ...(isTime(o['valid_until']) ? { validUntil: o['valid_until'] } : {}),
    ...(o['revoked'] === true ? { revoked: true } : {}),
    ...(Number.isInteger(confidence) && (confidence as number) >= 0 && (confidence as number) <= 100
      ? { confidence: confidence as number }
      : {}),
    ...(str(o['name']) !== undefined ? { name: str(o['name'])! } : {}),
    ...(labelsOf(o) ? { labels: labelsOf(o)! } : {}),
    ...(related.length > 0 ? { related } : {}),
  };
}

/**
 * The indicators of a STIX 2.1 bundle (`{"type": "bundle", "objects": [...]}`), of a TAXII 2.1 envelope
 * (`{"objects": [...], "more", "next"}`) or of a bare array of objects. Indicators with `pattern_type` other than
 * `stix` (sigma, snort, yara, ...), patterns outside the evaluated subset and malformed validity times are listed as
 * unsupported with the reason. Throws IntelFormatError for a document that is none of these, or too large.
 */
export function readStixBundle(json: unknown, limits: StixBundleLimits = DEFAULT_STIX_BUNDLE_LIMITS): IndicatorSet {
  const objects = objectsOf(json, limits);
  const g = graph(objects);
  const indicators: Indicator[] = [];
  const unsupported: UnsupportedIndicator[] = [];
  objects.forEach((o, i) => {
    if (!isObj(o) || o['type'] !== 'indicator') return;
    const read = readIndicator(o, i, g);
    if ('reason' in read) unsupported.push(read);
    else indicators.push(read);
  });
  return { indicators, unsupported };
}
