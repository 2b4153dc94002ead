import { randomBytes } from 'node:crypto';
import type { Hono, MiddlewareHandler } from 'hono';
import { HttpError, parseOr400, sendError } from '../../http/errors.js';
import { createCsrf, csrfGuard } from '../../http/web/csrf.js';
import { sendPage } from '../../http/web/layout.js';
import { pageHeaders } from '../../http/web/security.js';
import { registerAssets } from '../../http/web/static-assets.js';
import { abandonDeployment, createSetupSession, endBrowserSession, revealRecoveryToken } from '../browser-actions.js';
import { AbandonBody } from '../commands/abandon-deployment.js';
import { assertSameOrigin, browserOf } from '../browser-auth.js';
import type { AuthorityDeps, AuthorityEnv, BrowserContext } from '../env.js';
import type { SignInThrottle } from '../sign-in-throttle.js';
import { sessionOfTenant } from '../status-view.js';
import { installerCommand } from './installer-command.js';
import { OverviewPage } from './overview-page.js';
import { overviewData, sessionPageData } from './page-data.js';
import { SessionLive } from './session-live.js';
import { SessionPage } from './session-page.js';
import type { SetupUser } from './shell.js';
import { registerSignIn } from './sign-in-routes.js';
import { RecoveryTokenPage, SessionCreatedPage } from './token-pages.js';

/**
 * The setup authority's pages (server-rendered; the shared ES module refreshes the live region):
 * sign-in, the overview, creating a session (its token shown once), a session's live progress, and
 * revealing a recovery token. Forms need the same origin and the session's CSRF token.
 */
export function pageRoutes(app: Hono<AuthorityEnv>, deps: AuthorityDeps, throttle: SignInThrottle): void {
  // Form tokens are an HMAC of the browser session under a key of this process: nothing stored, a restart voids them.
  const csrf = createCsrf(randomBytes(32));
  const headers = pageHeaders();
  const userOf = (b: BrowserContext): SetupUser => ({
    name: deps.accounts.find(b.tenantId, b.userId)?.displayName ?? b.userId,
    tenantId: b.tenantId,
    csrf: csrf.tokenFor(b.sessionHash),
  });
  const tokenMinutes = Math.round(deps.config.sessions.setupTokenTtlSeconds / 60);

  /** A page for a signed-in browser; others are sent to the sign-in page, which brings them back. */
  const page: MiddlewareHandler<AuthorityEnv> = async (c, next) => {
    const b = browserOf(c, deps);
    if (!b) return c.redirect(c.req.path === '/' ? '/sign-in' : `/sign-in?next=${encodeURIComponent(c.req.path)}`, 303);
    c.set('browser', b);
    await next();
  };
  /**
   * A form post of a signed-in browser: the authority's public origin, then the shared guard (same origin, bounded
   * body, the session's CSRF token).
   */
  const signedInForm: MiddlewareHandler<AuthorityEnv> = async (c, next) => {
    const b = browserOf(c, deps);
    if (!b) throw new HttpError(401, 'sign in first: no valid browser session');
    assertSameOrigin(c, deps);
    c.set('browser', b);
    await next();
  };
  const guard = csrfGuard<AuthorityEnv>(
    csrf,
    (c) => c.get('browser').sessionHash,
    (c, status, message) => sendError(c, new HttpError(status, message)),
  );
  const form = [signedInForm, guard] as const;

  registerAssets(app);

  registerSignIn(app, deps, csrf, throttle);

  app.post('/sign-out', headers, ...form, async (c) => {
    await endBrowserSession(c, deps, c.get('browser'));
    return c.redirect('/sign-in', 303);
  });

  app.get('/', headers, page, (c) => {
    const b = c.get('browser');
    return sendPage(
      c,
      <OverviewPage
        user={userOf(b)}
        data={overviewData(deps.pipeline.models, b.tenantId)}
        tokenTtlMinutes={tokenMinutes}
        showAbandoned={c.req.query('abandoned') === 'show'}
      />,
    );
  });

  app.post('/setup-sessions', headers, ...form, async (c) => {
    const b = c.get('browser');
    const created = await createSetupSession(c, deps, b);
    const progress = sessionPageData(
      deps.pipeline.models,
      sessionOfTenant(deps.pipeline.models, b.tenantId, created.sessionId),
    );
    return sendPage(
      c,
      <SessionCreatedPage
        user={userOf(b)}
        {...created}
        command={installerCommand(deps.publicUrl(), 'setup')}
        progress={progress}
        now={deps.now().toISOString()}
      />,
    );
  });

  app.get('/setup-sessions/:id', headers, page, (c) => {
    const b = c.get('browser');
    const view = sessionOfTenant(deps.pipeline.models, b.tenantId, c.req.param('id'));
    return sendPage(
      c,
      <SessionPage
        user={userOf(b)}
        data={sessionPageData(deps.pipeline.models, view)}
        now={deps.now().toISOString()}
      />,
    );
  });

  // The live region alone, for the ES module: the same component the page renders.
  app.get('/setup-sessions/:id/live', headers, (c) => {
    const b = browserOf(c, deps);
    if (!b) throw new HttpError(401, 'sign in first: no valid browser session');
    const view = sessionOfTenant(deps.pipeline.models, b.tenantId, c.req.param('id'));
    return c.html(
      String(
        <SessionLive
          data={sessionPageData(deps.pipeline.models, view)}
          now={deps.now().toISOString()}
          csrf={userOf(b).csrf}
        />,
      ),
    );
  });

  app.post('/deployments/:id/abandon', headers, ...form, async (c) => {
    const body = await c.req.parseBody();
    if (body.confirm !== 'abandon') throw new HttpError(400, 'confirm first: tick the box that says you abandon it');
    const reason = parseOr400(AbandonBody, { reason: body.reason }, 'abandon request').reason;
    const deploymentId = c.req.param('id');
    await abandonDeployment(c, deps, c.get('browser'), deploymentId, reason);
    return c.redirect(`/setup-sessions/${deps.pipeline.models.deployments.byId[deploymentId]!.sessionId}`, 303);
  });

  app.post('/deployments/:id/recovery-token', headers, ...form, async (c) => {
    if ((await c.req.parseBody()).confirm !== 'reveal')
      throw new HttpError(400, 'confirm first: tick the box that says you are about to reinstall the central VM');
    const b = c.get('browser');
    const deploymentId = c.req.param('id');
    const r = await revealRecoveryToken(c, deps, b, deploymentId);
    const sessionId = deps.pipeline.models.deployments.byId[deploymentId]!.firstSessionId;
    return sendPage(
      c,
      <RecoveryTokenPage
        user={userOf(b)}
        deploymentId={deploymentId}
        sessionId={sessionId}
        recoveryId={r.recoveryId}
        token={r.token}
        command={installerCommand(deps.publicUrl(), 'recovery')}
      />,
    );
  });
}
