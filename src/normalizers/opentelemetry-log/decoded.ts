/** The outcome of reading one part of a raw record: a value, or why the record is refused. */
export type Decoded<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

/** A successful read. */
export function ok<T>(value: T): Decoded<T> {
  return { ok: true, value };
}

/** A refused read whose message starts with the field path, e.g. `attributes[2].value: expected ...`. */
export function fail(path: string, message: string): { readonly ok: false; readonly error: string } {
  return { ok: false, error: `${path || 'record'}: ${message}` };
}

/** The path of `field` below `parent` (`parent.field`, or just `field` at the top level). */
export function at(parent: string, field: string): string {
  return parent === '' ? field : `${parent}.${field}`;
}

/** Whether a value is a plain JSON object (not null, not an array). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Proto3 JSON reads `null` as "field not set", so both null and undefined count as absent. */
export function isAbsent(value: unknown): value is null | undefined {
  return value === undefined || value === null;
}

/** Sets an own property even for keys like `__proto__`, which plain assignment would treat specially. */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

type ValueOf<D> = D extends { readonly ok: true; readonly value: infer V } ? V : never;

/** All reads' values under their names, or the first refusal in key order. */
export function all<T extends Record<string, Decoded<unknown>>>(reads: T): Decoded<{ [K in keyof T]: ValueOf<T[K]> }> {
  const out: Record<string, unknown> = {};
  for (const [key, read] of Object.entries(reads)) {
    if (!read.ok) return read;
    out[key] = read.value;
  }
  return ok(out as { [K in keyof T]: ValueOf<T[K]> });
}
