/**
 * A JSON Schema validator for the subset @valibot/to-json-schema emits and docs/openapi.json uses: type, const,
 * enum, properties, required, additionalProperties, propertyNames, items (one schema or a tuple), min/maxItems,
 * anyOf, oneOf, allOf, $ref into `#/components/schemas`, min/maxLength, pattern, minimum, maximum. Any other
 * keyword is an issue, so a schema this does not understand cannot pass silently.
 */
type Schema = Record<string, unknown>;

const KNOWN = new Set([
  'type', 'const', 'enum', 'properties', 'required', 'additionalProperties', 'propertyNames', 'items', 'minItems',
  'maxItems', 'anyOf', 'oneOf', 'allOf', '$ref', 'minLength', 'maxLength', 'pattern', 'minimum', 'maximum',
  'description', '$schema', 'format', 'title',
]);

function typeOf(x: unknown): string {
  if (x === null) return 'null';
  if (Array.isArray(x)) return 'array';
  if (typeof x === 'number') return Number.isInteger(x) ? 'integer' : 'number';
  return typeof x;
}

/** The issues of `value` against `schema` (empty: valid), each as `path: what`. */
export function schemaIssues(value: unknown, schema: Schema, root: Schema, path = '$'): string[] {
  const out: string[] = [];
  for (const k of Object.keys(schema)) if (!KNOWN.has(k)) out.push(`${path}: schema keyword ${k} is not understood`);
  if (typeof schema.$ref === 'string') {
    const name = /^#\/components\/schemas\/(.+)$/.exec(schema.$ref)?.[1];
    const target = name && (root.components as { schemas: Record<string, Schema> }).schemas[name];
    if (!target) return [...out, `${path}: unresolved ${schema.$ref}`];
    out.push(...schemaIssues(value, target, root, path));
  }
  const t = typeOf(value);
  if (schema.type !== undefined) {
    const types = ([] as unknown[]).concat(schema.type);
    if (!types.some((x) => x === t || (x === 'number' && t === 'integer')))
      return [...out, `${path}: expected ${types.join('|')}, got ${t}`];
  }
  if ('const' in schema && JSON.stringify(schema.const) !== JSON.stringify(value))
    out.push(`${path}: expected ${JSON.stringify(schema.const)}`);
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value)))
    out.push(`${path}: ${JSON.stringify(value)} is not one of ${JSON.stringify(schema.enum)}`);
  if (t === 'string') {
    const s = value as string;
    if (typeof schema.minLength === 'number' && s.length < schema.minLength) out.push(`${path}: shorter than ${schema.minLength}`);
    if (typeof schema.maxLength === 'number' && s.length > schema.maxLength) out.push(`${path}: longer than ${schema.maxLength}`);
    if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(s)) out.push(`${path}: does not match ${schema.pattern}`);
  }
  if (t === 'number' || t === 'integer') {
    const n = value as number;
    if (typeof schema.minimum === 'number' && n < schema.minimum) out.push(`${path}: below ${schema.minimum}`);
    if (typeof schema.maximum === 'number' && n > schema.maximum) out.push(`${path}: above ${schema.maximum}`);
  }
  if (t === 'array') {
    const a = value as unknown[];
    if (typeof schema.minItems === 'number' && a.length < schema.minItems) out.push(`${path}: fewer than ${schema.minItems} items`);
    if (typeof schema.maxItems === 'number' && a.length > schema.maxItems) out.push(`${path}: more than ${schema.maxItems} items`);
    if (Array.isArray(schema.items)) schema.items.forEach((s, i) => i < a.length && out.push(...schemaIssues(a[i], s as Schema, root, `${path}[${i}]`)));
    else if (schema.items) a.forEach((x, i) => out.push(...schemaIssues(x, schema.items as Schema, root, `${path}[${i}]`)));
  }
  if (t === 'object') {
    const o = value as Record<string, unknown>;
    const props = (schema.properties ?? {}) as Record<string, Schema>;
    for (const k of (schema.required ?? []) as string[]) if (!(k in o)) out.push(`${path}: missing ${k}`);
    for (const [k, x] of Object.entries(o)) {
      if (props[k]) out.push(...schemaIssues(x, props[k]!, root, `${path}.${k}`));
      else if (schema.additionalProperties === false) out.push(`${path}: ${k} is not allowed`);
      else if (schema.additionalProperties && typeof schema.additionalProperties === 'object')
        out.push(...schemaIssues(x, schema.additionalProperties as Schema, root, `${path}.${k}`));
      if (schema.propertyNames) out.push(...schemaIssues(k, schema.propertyNames as Schema, root, `${path} key ${k}`));
    }
  }
  const passing = (s: unknown) => schemaIssues(value, s as Schema, root, path).length === 0;
  if (Array.isArray(schema.anyOf) && !schema.anyOf.some(passing))
    out.push(`${path}: matches none of anyOf (${schema.anyOf.map((s) => schemaIssues(value, s as Schema, root, path)[0]).join('; ')})`);
  if (Array.isArray(schema.oneOf) && schema.oneOf.filter(passing).length !== 1) out.push(`${path}: does not match exactly one of oneOf`);
  if (Array.isArray(schema.allOf)) for (const s of schema.allOf) out.push(...schemaIssues(value, s as Schema, root, path));
  return out;
}
