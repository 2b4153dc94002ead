import type { Hono } from 'hono';
import { readJsonBody } from '../../http/body.js';
import { HttpError, parseOr400 } from '../../http/errors.js';
import { AbandonBody } from '../commands/abandon-deployment.js';
import {
  abandonDeployment,
  createSetupSession,
  endBrowserSession,
  revealRecoveryToken,
  startBrowserSession,
} from '../browser-actions.js';
import { CSRF_HEADER, assertSameOrigin, requireBrowser, requireCsrf } from '../browser-auth.js';
import type { AuthorityDeps, AuthorityEnv } from '../env.js';
import { CreateSessionBody, SignInBody } from '../schemas.js';
import { throttledError, type SignInThrottle } from '../sign-in-throttle.js';
import { sessionOfTenant, sessionStatus } from '../status-view.js';

/** The browser side: sign-in, setup session creation and polling, the recovery action. */
export function browserRoutes(app: Hono<AuthorityEnv>, deps: AuthorityDeps, throttle: SignInThrottle): void {
  const signedIn = requireBrowser(deps);
  const csrf = requireCsrf(deps);

  app.post('/v1/browser-sessions', async (c) => {
    assertSameOrigin(c, deps);
    // A JSON content type cannot be sent cross-site without a CORS preflight, which this service never grants.
    if (!/^application\/json\b/i.test(c.req.header('content-type') ?? ''))
      throw new HttpError(415, 'expected Content-Type: application/json');
    const wait = throttle.waitSeconds(c);
    if (wait > 0) throw throttledError(wait);
    const body = parseOr400(SignInBody, await readJsonBody(c, 4096), 'sign-in request');
    const account = deps.accounts.authenticate(body.token);
    if (!account) {
      throttle.failed(c);
      throw new HttpError(401, 'unknown or disabled account token');
    }
    const started = await startBrowserSession(c, deps, account);
    return c.json(
      {
        tenant_id: account.tenantId,
        user_id: account.userId,
        display_name: account.displayName,
        csrf_token: started.csrfToken,
        csrf_header: CSRF_HEADER,
        expires_at: started.expiresAt,
      },
      201,
    );
  });

  app.delete('/v1/browser-sessions/current', signedIn, csrf, async (c) => {
    await endBrowserSession(c, deps, c.get('browser'));
    return c.body(null, 204);
  });

  app.post('/v1/setup-sessions', signedIn, csrf, async (c) => {
    const raw = await readJsonBody(c, 4096);
    if (
      raw !== null &&
      typeof raw === 'object' &&
      ('tenant_id' in raw || 'user_id' in raw || 'tenantId' in raw || 'userId' in raw)
    ) {
      throw new HttpError(400, 'invalid setup session request', [
        '(body): tenant and user come from the signed-in account; send {}',
      ]);
    }
    parseOr400(CreateSessionBody, raw, 'setup session request');
    const created = await createSetupSession(c, deps, c.get('browser'));
    return c.json(
      { session_id: created.sessionId, setup_token: created.setupToken, expires_at: created.expiresAt },
      201,
    );
  });

  app.get('/v1/setup-sessions/:id', signedIn, (c) => {
    const view = sessionOfTenant(deps.pipeline.models, c.get('browser').tenantId, c.req.param('id'));
    return c.json(sessionStatus(deps.pipeline.models, view));
  });

  app.post('/v1/deployments/:id/abandon', signedIn, csrf, async (c) => {
    const b = parseOr400(AbandonBody, await readJsonBody(c, 4096), 'abandon request');
    const r = await abandonDeployment(c, deps, c.get('browser'), c.req.param('id'), b.reason);
    return c.json({ deployment_id: r.deploymentId, status: 'abandoned', previous_status: r.from });
  });

  app.post('/v1/deployments/:id/recovery-token/reveal', signedIn, csrf, async (c) => {
    const deploymentId = c.req.param('id');
    const r = await revealRecoveryToken(c, deps, c.get('browser'), deploymentId);
    return c.json({ deployment_id: deploymentId, recovery_id: r.recoveryId, recovery_token: r.token });
  });
}
