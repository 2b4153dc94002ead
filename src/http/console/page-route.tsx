import type { Context, Hono, MiddlewareHandler } from 'hono';
import type { Child } from 'hono/jsx';
import type { Principal } from '../../auth/registry.js';
import { allows, type Permission } from '../../auth/roles.js';
import { hashToken } from '../../auth/tokens.js';
import type { AppDeps, AppEnv, NetPolicy } from '../env.js';
import { guard } from '../guard.js';
import { honoPath } from '../route.js';
import { csrfGuard, type Csrf } from '../web/csrf.js';
import { Layout, sendPage, type NavItem } from '../web/layout.js';
import { pageHeaders } from '../web/security.js';
import { presentedSessionHash, overTls, type SessionKeeper } from './session.js';

/** What a page handler gets: the app's dependencies, who is asking, and how to answer a page. */
export interface PageScope {
  readonly deps: AppDeps;
  readonly net: NetPolicy;
  readonly principal: Principal;
  /** The CSRF token every form of this page carries. */
  readonly csrf: string;
  readonly sessions: SessionKeeper;
  /** Whether the principal holds a permission (the same table as the API): what it lacks is not offered. */
  can(permission: Permission): boolean;
  /** Answers the page `title` with `content` in the console's shell. */
  render(title: string, content: Child, opts?: { status?: 200 | 400 | 403 | 404 | 409 | 413 | 429 | 503 }): Response;
}

/**
 * One console page (or form action), declared once: its path, permission and audit label drive the guard as for the
 * API.
 */
export interface PageRoute {
  readonly method: 'get' | 'post';
  /** The path template (`/alerts/{alertId}`), also the route the audit log records. */
  readonly path: string;
  readonly permission: Permission;
  /** The operation label of the request's access event and audit record (`console_…`). */
  readonly audit: string;
  handle(c: Context<AppEnv>, scope: PageScope): Response | Promise<Response>;
}

/** The console's navigation: each entry shown only to a principal holding its permission. */
const NAV: readonly (NavItem & { permission: Permission })[] = [
  { href: '/', label: 'Overview', permission: 'principal:read' },
  { href: '/alerts', label: 'Alerts', permission: 'alerts:read' },
  { href: '/incidents', label: 'Incidents', permission: 'incidents:read' },
  { href: '/plan', label: 'Detection plan', permission: 'plan:read' },
  { href: '/graph', label: 'Graph', permission: 'graph:read' },
  { href: '/events', label: 'Events', permission: 'events:read' },
  { href: '/hunt', label: 'Hunt', permission: 'events:read' },
  { href: '/rules', label: 'Rules', permission: 'rules:read' },
  { href: '/exceptions', label: 'Exceptions', permission: 'rules:read' },
  { href: '/intel', label: 'Threat intel', permission: 'rules:read' },
  { href: '/audit', label: 'Audit trail', permission: 'audit:read' },
];

/** The navigation a principal may follow. */
export function navFor(principal: Principal | undefined): NavItem[] {
  return NAV.filter((n) => principal !== undefined && allows(principal.roles, n.permission)).map(({ href, label }) => ({
    href,
    label,
  }));
}

/** Whether the client asked for a page (a browser's navigation); other clients get the API's ErrorResponse. */
export function wantsHtml(c: Context): boolean {
  return (c.req.header('accept') ?? '').includes('text/html');
}

/** What the CSRF token of a request is bound to: its session, or (mesh, loopback) its principal. */
export function csrfBinding(c: Context<AppEnv>, deps: AppDeps, net: NetPolicy): string | undefined {
  const hash = presentedSessionHash(c, overTls(c, deps, net));
  if (hash !== undefined) return `session:${hash}`;
  const p = c.get('principal') as Principal | undefined;
  return p ? `principal:${hashToken(`${p.authentication}\0${p.id}`)}` : undefined;
}

/** Shows a page in the console's shell for `principal`, with the sign-out form when the request carries a session. */
export function pageShell(
  c: Context<AppEnv>,
  deps: AppDeps,
  net: NetPolicy,
  csrf: Csrf,
  principal: Principal | undefined,
  title: string,
  content: Child,
  status: number = 200,
): Response {
  const binding = csrfBinding(c, deps, net);
  const session =
    presentedSessionHash(c, overTls(c, deps, net)) !== undefined && principal?.authentication === 'console_session';
  const notice = c.req.query('notice');
  const failed = c.req.query('error');
  return sendPage(
    c,
    <Layout
      title={title}
      brand="Vigil console"
      nav={navFor(principal)}
      current={c.req.path}
      {...(principal
        ? { user: { name: principal.displayName, roles: principal.roles, authentication: principal.authentication } }
        : {})}
      {...(session && binding ? { signOut: { action: '/sign-out', csrf: csrf.tokenFor(binding) } } : {})}
      {...(failed
        ? { notice: { kind: 'error' as const, text: failed.slice(0, 300) } }
        : notice
          ? { notice: { kind: 'ok' as const, text: notice.slice(0, 300) } }
          : {})}
    >
      {content}
    </Layout>,
    status as 200,
  );
}

/**
 * Turns an error answer of a page (the guard's or a handler's ErrorResponse) into a page for a
 * browser: a GET without credentials goes to the sign-in page; anything else shows its message with
 * its status. A client that does not ask for HTML keeps the ErrorResponse.
 * The access and audit records were already written with the real status.
 */
export function pageErrors(deps: AppDeps, net: NetPolicy, csrf: Csrf): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await next();
    const res = c.res;
    if (res.status < 400 || !wantsHtml(c) || !(res.headers.get('content-type') ?? '').includes('application/json'))
      return;
    const message = (
      (await res
        .clone()
        .json()
        .catch(() => ({}))) as { error?: unknown }
    ).error;
    if (res.status === 401 && c.req.method === 'GET') {
      c.res = new Response(null, {
        status: 303,
        headers: { location: `/sign-in?next=${encodeURIComponent(c.req.path + new URL(c.req.url).search)}` },
      });
      return;
    }
    const text = typeof message === 'string' ? message : 'the request failed';
    c.res = pageShell(
      c,
      deps,
      net,
      csrf,
      c.get('principal'),
      `Error ${res.status}`,
      <section class="panel">
        <h1>{res.status === 403 ? 'Not allowed' : res.status === 401 ? 'Sign in first' : 'That did not work'}</h1>
        <p>{text}</p>
        <p>
          <a href="/">Back to the overview</a>
        </p>
      </section>,
      res.status,
    );
  };
}

/**
 * Registers the console's pages: page headers, error pages, the API's guard (session first), CSRF on forms, then the
 * handler.
 */
export function registerPages(
  app: Hono<AppEnv>,
  deps: AppDeps,
  net: NetPolicy,
  csrf: Csrf,
  sessions: SessionKeeper,
  pages: readonly PageRoute[],
): void {
  const refuse = (c: Context<AppEnv>, status: 403 | 413, message: string) => c.json({ error: message }, status);
  for (const p of pages) {
    const handlers: MiddlewareHandler<AppEnv>[] = [
      pageHeaders() as MiddlewareHandler<AppEnv>,
      pageErrors(deps, net, csrf),
      guard(deps, net, p.path, p.audit, p.permission, (c) => sessions.identify(c)),
      ...(p.method === 'post' ? [csrfGuard<AppEnv>(csrf, (c) => csrfBinding(c, deps, net), refuse)] : []),
      async (c) => {
        const principal = c.get('principal');
        const binding = csrfBinding(c, deps, net)!;
        return p.handle(c, {
          deps,
          net,
          principal,
          sessions,
          csrf: csrf.tokenFor(binding),
          can: (permission) => allows(principal.roles, permission),
          render: (title, content, opts) =>
            pageShell(c, deps, net, csrf, principal, title, content, opts?.status ?? 200),
        });
      },
    ];
    app.on(p.method.toUpperCase(), [honoPath(p.path)], ...handlers);
  }
}
