import { stringify } from 'yaml';
import { compileSigma } from '../compile.js';
import { parseSigmaText } from '../sigma-yaml.js';
import type { HuntExpr, HuntQuery, HuntValue } from './ast.js';
import { indexTermsOf } from './index-terms.js';
import { printHunt } from './print.js';
import { isCidr, plainText } from './value-test.js';

/** The Sigma logsource of each adapter whose every event carries that logsource's index key. */
const ADAPTER_PRODUCTS: Record<string, string> = {
  'network-monitor': 'zeek',
  'linux-journal': 'linux',
  'syslog-rfc5424': 'linux',
  'mesh-vpn-logs': 'tailscale',
  'opentelemetry-log': 'opentelemetry',
};

/** NormalizedEvent fields a Sigma rule reads by their plain name (logsources.ts, `topLevel`). */
const SIGMA_TOP = new Set(['id', 'category', 'class', 'activity', 'outcome', 'time', 'ingestedAt', 'severity']);
/** Objects of a NormalizedEvent a dotted Sigma field reads into. */
const SIGMA_OBJECTS = new Set(['source', 'actor', 'sourceEndpoint', 'destinationEndpoint', 'service', 'correlation']);
/** Top-level fields that hold objects: a dotted Sigma name starting with one reads into the event there. */
const EVENT_OBJECTS = new Set([...SIGMA_OBJECTS, 'attributes', 'rawReference']);
const CASED = new Set(['category', 'class', 'source.adapter', 'entityKeys']);
const NUMERIC = /^-?\d{1,30}(\.\d{1,30})?$/;

type Out = { selections: Record<string, Record<string, unknown>>; reasons: string[] };

/** The Sigma name of a hunt field, read by Vigil's field resolution (docs/detections.md), or a reason. */
function sigmaField(field: string): { name: string } | { reason: string } {
  if (field.includes('*')) return { reason: `wildcard field name '${field}' has no Sigma form` };
  if (field.includes('|')) return { reason: `field name '${field}' holds '|', which Sigma reads as a modifier` };
  const [first = '', ...rest] = field.split('.');
  if (first === 'attributes' && rest.length > 0) {
    if (rest.length === 1) return { name: SIGMA_TOP.has(rest[0]!) ? field : rest[0]! };
    // Sigma reads a dotted name as one attribute key first (Zeek's `id.orig_h`), then as a path from the event's top.
    if (EVENT_OBJECTS.has(rest[0]!)) return { reason: `'${field}' would be read from the event's own '${rest[0]}'` };
    return { name: rest.join('.') };
  }
  if (rest.length === 0 && SIGMA_TOP.has(first)) return { name: field };
  if (rest.length > 0 && SIGMA_OBJECTS.has(first)) return { name: field };
  return { reason: `field '${field}' has no Sigma name (attribute fields are written attributes.<name>)` };
}

const escapeSigma = (text: string): string => text.replace(/[\\*?]/g, (ch) => `\\${ch}`);

/** A `field:value` term's Sigma key suffix and value. */
function sigmaValue(value: HuntValue, cased: boolean): { modifier: string; value: unknown } {
  const text = plainText(value);
  if (text === undefined || (!value.quoted && value.parts.length > 1)) {
    const parts = value.quoted ? [value.text] : value.parts;
    return { modifier: cased ? '|cased' : '', value: parts.map(escapeSigma).join('*') };
  }
  if (!cased && isCidr(text)) return { modifier: '|cidr', value: text };
  if (!cased && !value.quoted && NUMERIC.test(text)) return { modifier: '', value: Number(text) };
  return { modifier: cased ? '|cased' : '', value: escapeSigma(text) };
}

const RANGE_MODIFIERS = { '<': 'lt', '<=': 'lte', '>': 'gt', '>=': 'gte' } as const;

function selection(out: Out, entry: Record<string, unknown>): string {
  const id = `sel${Object.keys(out.selections).length + 1}`;
  out.selections[id] = entry;
  return id;
}

function termCondition(e: HuntExpr & { field: string | null }, out: Out): string {
  if (e.field === null) return (out.reasons.push('free text has no Sigma form with the same meaning'), 'x');
  const f = sigmaField(e.field);
  if ('reason' in f) return (out.reasons.push(f.reason), 'x');
  if (e.kind === 'exists') {
    const present = selection(out, { [`${f.name}|exists`]: true });
    return `(${present} and not ${selection(out, { [f.name]: null })})`;
  }
  if (e.kind === 'range') {
    const text = plainText(e.value) ?? '';
    if (!NUMERIC.test(text)) return (out.reasons.push(`range '${e.field} ${e.op} ${text}' is not numeric`), 'x');
    return selection(out, { [`${f.name}|${RANGE_MODIFIERS[e.op]}`]: Number(text) });
  }
  if (e.kind !== 'match') return 'x';
  const v = sigmaValue(e.value, CASED.has(e.field));
  return selection(out, { [`${f.name}${v.modifier}`]: v.value });
}

/** `f:(a or b)`: one selection with a value list (Sigma ORs a list), when every item is `f:value` alike. */
function valueList(e: HuntExpr & { kind: 'or' }, out: Out): string | undefined {
  const first = e.items[0];
  if (first?.kind !== 'match' || first.field === null) return undefined;
  const field = first.field;
  const name = sigmaField(field);
  if ('reason' in name) return undefined;
  const values = e.items.map((i) =>
    i.kind === 'match' && i.field === field ? sigmaValue(i.value, CASED.has(field)) : undefined,
  );
  const modifier = values[0]!.modifier;
  if (!values.every((v) => v !== undefined && v.modifier === modifier)) return undefined;
  return selection(out, { [`${name.name}${modifier}`]: values.map((v) => v!.value) });
}

function condition(e: HuntExpr, out: Out): string {
  switch (e.kind) {
    case 'or':
      return valueList(e, out) ?? `(${e.items.map((i) => condition(i, out)).join(' or ')})`;
    case 'and':
      return `(${e.items.map((i) => condition(i, out)).join(' and ')})`;
    case 'not':
      return `not ${condition(e.item, out)}`;
    case 'all':
      out.reasons.push("'*' (everything) has no Sigma form inside a query");
      return 'x';
    case 'nested':
      out.reasons.push(`nested query '${e.field}:{...}' has no Sigma form`);
      return 'x';
    default:
      return termCondition(e, out);
  }
}

function logsourceOf(q: HuntQuery): { product: string } | string {
  const adapters = indexTermsOf(q.filter).adapter ?? [];
  const products = new Set(adapters.map((a) => ADAPTER_PRODUCTS[a]));
  const [product] = products;
  if (products.size !== 1 || product === undefined)
    return `a Sigma rule needs a logsource: say source.adapter:<${Object.keys(ADAPTER_PRODUCTS).join(' | ')}>`;
  return { product };
}

/** The hunt's filter as a Sigma rule Vigil compiles (docs/hunting.md, "Save as rule"), or why it has none. */
export function huntToSigma(
  q: HuntQuery,
  o: { title: string; id: string },
): { ok: true; yaml: string } | { ok: false; reasons: string[] } {
  const out: Out = { selections: {}, reasons: [] };
  for (const p of q.pipes)
    if (p.kind === 'stats' || p.kind === 'top' || p.kind === 'timechart')
      out.reasons.push(`'| ${p.kind}' counts events; a Sigma detection matches one event (use a correlation rule)`);
  const logsource = logsourceOf(q);
  if (typeof logsource === 'string') out.reasons.push(logsource);
  if (q.filter.kind === 'all') out.reasons.push('the query matches every event');
  const cond = q.filter.kind === 'all' ? '' : condition(q.filter, out);
  if (out.reasons.length > 0) return { ok: false, reasons: [...new Set(out.reasons)] };
  const doc = {
    title: o.title,
    id: o.id,
    status: 'experimental',
    description: `Saved from the hunt: ${printHunt(q)}`,
    logsource,
    detection: { ...out.selections, condition: cond },
    level: 'medium',
  };
  const yaml = stringify(doc, { lineWidth: 0 });
  return checked(yaml);
}

/** Vigil's own Sigma compiler must take the rule (limits on selections and nesting included). */
function checked(yaml: string): { ok: true; yaml: string } | { ok: false; reasons: string[] } {
  const parsed = parseSigmaText(yaml);
  if (!parsed.ok) return { ok: false, reasons: [parsed.error] };
  const compiled = compileSigma(parsed.docs[0]);
  return compiled.ok ? { ok: true, yaml } : { ok: false, reasons: [compiled.error] };
}
