import type { Context, MiddlewareHandler } from 'hono';
import type * as v from 'valibot';
import type { Permission } from '../auth/roles.js';
import type { AppDeps, AppEnv, NetPolicy } from './env.js';

/** Marks a route that takes no bearer credential, saying why it needs none. */
export interface Public {
  readonly public: string;
}

/** Whether a route's permission is the explicit mark of a public route. */
export function isPublic(permission: Permission | Public): permission is Public {
  return typeof permission !== 'string';
}

/** Whether a route runs behind the guard: a permission to check and an audit label to record. */
export function isGuarded(r: Route): r is Route & { readonly permission: Permission; readonly audit: string } {
  return !isPublic(r.permission);
}

/** Statuses a handler answers itself; the guard adds 401, 403 and 429 to every guarded route. */
export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 429;

/** Response schemas published once under `components` of the OpenAPI document. */
export type SchemaName = 'NormalizedEvent' | 'IngestionResult' | 'CollectorSubmissionResult' | 'Principal';

/**
 * A request body: JSON of a schema, a batch of records of a schema (see batch.ts), Sigma YAML, or described media
 * types.
 */
export type RequestBody =
  | { readonly json: v.GenericSchema }
  /** A batch of records (src/http/batch.ts); `text`, when a route also takes `text/plain`, says what it holds. */
  | { readonly batch: v.GenericSchema; readonly text?: string }
  | { readonly yaml: string }
  /** Bodies in other media types (OTLP protobuf or JSON), each described in words. */
  | { readonly media: Readonly<Record<string, string>> };

/**
 * The success answer: its status, and its body, described to integrators by a schema that is true of every answer:
 * JSON of `schema` (a component's name or inline), other media types described in words (`media`), or both.
 */
export type SuccessResponse = {
  readonly status: 200 | 201 | 202;
  readonly description: string;
} & (
  | { readonly schema: v.GenericSchema | SchemaName; readonly media?: Readonly<Record<string, string>> }
  | { readonly schema?: undefined; readonly media: Readonly<Record<string, string>> }
);

/** What a handler gets besides the request: the app's dependencies, its address policy and its own entry. */
export interface RouteScope {
  readonly deps: AppDeps;
  readonly net: NetPolicy;
  readonly route: Route;
}

/** A query or path-parameter schema: an object of string schemas, one per parameter. */
type ParamsSchema<K extends string, In = string> =
  | v.ObjectSchema<{ readonly [N in K]: v.GenericSchema<In, unknown> }, undefined>
  | v.StrictObjectSchema<{ readonly [N in K]: v.GenericSchema<In, unknown> }, undefined>;

/** The names of the `{param}` placeholders of an OpenAPI path template. */
type ParamName<P extends string> = P extends `${string}{${infer N}}${infer Rest}` ? N | ParamName<Rest> : never;

/** The Hono pattern of an OpenAPI path template, as a type (`{alertId}` becomes `:alertId`). */
export type HonoPath<P extends string> = P extends `${infer Head}{${infer N}}${infer Rest}`
  ? `${Head}:${N}${HonoPath<Rest>}`
  : P;

/** A template with placeholders must describe each of them; one without has nothing to describe. */
type PathParams<P extends string> = string extends P
  ? { readonly params?: ParamsSchema<string> }
  : [ParamName<P>] extends [never]
    ? { readonly params?: undefined }
    : { readonly params: ParamsSchema<ParamName<P>> };

/** Who may call: a permission the guard checks and an audit label it records, or an explicit public mark. */
type Access =
  | {
      readonly permission: Permission;
      /** The operation label of the request's access event and audit record: stored in the log, never renamed. */
      readonly audit: string;
    }
  | {
      readonly permission: Public;
      /** The label of the access records a public route writes itself, if it writes any. */
      readonly audit?: string;
    };

/** A read takes no body; a write says what its body is. */
type MethodBody =
  | { readonly method: 'get'; readonly body?: undefined }
  | { readonly method: 'post' | 'put' | 'patch' | 'delete'; readonly body: RequestBody };

/** The declaration of one operation: registration, guard, audit label and OpenAPI entry all come from it. */
export type Route<P extends string = string> = MethodBody &
  Access &
  PathParams<P> & {
    /** The OpenAPI path template (`/api/v1/alerts/{alertId}`), also the route the audit log records. */
    readonly path: P;
    readonly operationId: string;
    readonly summary: string;
    readonly query?: ParamsSchema<string, string | undefined>;
    readonly success: SuccessResponse;
    /** The error statuses of the handler and its middleware (the guard's are added where it runs). */
    readonly errors: readonly ErrorStatus[];
    /** Middleware run after the guard and before the handler. */
    readonly middleware?: (deps: AppDeps) => readonly MiddlewareHandler<AppEnv>[];
    handle(c: Context<AppEnv, HonoPath<P>>, scope: RouteScope): Response | Promise<Response>;
  };

/** Declares one operation; the path literal types the handler's `c.req.param()`. */
export function route<const P extends string>(declaration: Route<P>): Route {
  return declaration as unknown as Route;
}

/** The Hono pattern of an OpenAPI path template (`/api/v1/alerts/{alertId}` → `/api/v1/alerts/:alertId`). */
export function honoPath(template: string): string {
  return template.replace(/\{([^}/]+)\}/g, ':$1');
}
