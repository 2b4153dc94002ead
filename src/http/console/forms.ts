import type { Context } from 'hono';
import * as v from 'valibot';
import type { AppEnv } from '../env.js';
import { HttpError, parseOr400 } from '../errors.js';
import { CSRF_FIELD } from '../web/csrf.js';
import { withQuery } from '../web/components/url.js';

/** A form's fields: a repeated field (checkboxes) as an array, the CSRF token left out. */
export async function formFields(c: Context<AppEnv>): Promise<Record<string, string | string[]>> {
  const type = c.req.header('content-type') ?? '';
  if (!/^(application\/x-www-form-urlencoded|multipart\/form-data)/.test(type))
    throw new HttpError(415, 'expected a form (application/x-www-form-urlencoded)');
  const body = await c.req.parseBody({ all: true });
  const out: Record<string, string | string[]> = {};
  for (const [k, value] of Object.entries(body)) {
    if (k === CSRF_FIELD) continue;
    const strings = (Array.isArray(value) ? value : [value]).filter((x): x is string => typeof x === 'string');
    if (strings.length > 0) out[k] = strings.length === 1 && !Array.isArray(value) ? strings[0]! : strings;
  }
  return out;
}

/** Parses a form with a schema; a 400 (shown as a page) names every bad field. */
export function parseForm<S extends v.GenericSchema>(schema: S, fields: unknown): v.InferOutput<S> {
  return parseOr400(schema, fields, 'form');
}

/** A form field that is empty when not filled: undefined. */
export const optionalField = <S extends v.GenericSchema<string, unknown>>(s: S) =>
  v.optional(
    v.union([
      v.pipe(
        v.literal(''),
        v.transform(() => undefined),
      ),
      s,
    ]),
  );

/**
 * An assign form's typed assignee: empty clears it; otherwise a principal id as the API takes it (no control
 * characters).
 */
export const assigneeField = v.optional(
  v.pipe(v.string(), v.trim(), v.maxLength(128), v.regex(/^[^\p{Cc}]*$/u, 'no control characters')),
  '',
);

/** Always an array of ids: a checkbox group that sent one value, several, or none. */
export function idsField(max: number) {
  const Id = v.pipe(v.string(), v.minLength(1), v.maxLength(128));
  return v.pipe(
    v.optional(v.union([Id, v.array(Id)])),
    v.transform((x): string[] => (x === undefined ? [] : typeof x === 'string' ? [x] : x)),
    v.maxLength(max),
  );
}

/** Where a form goes back to after it did its work: a console path, with a notice. */
export function backTo(c: Context<AppEnv>, path: unknown, notice: string): Response {
  const target = typeof path === 'string' && /^\/(?![/\\])[\x21-\x7e]{0,2000}$/.test(path) ? path : '/';
  const url = new URL(target, 'http://x');
  url.searchParams.delete('notice');
  url.searchParams.delete('error');
  url.searchParams.set('notice', notice);
  return c.redirect(`${url.pathname}${url.search}`, 303);
}

export { withQuery };
