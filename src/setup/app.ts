import { randomBytes } from 'node:crypto';
import { Hono } from 'hono';
import { HttpError, sendError } from '../http/errors.js';
import type { AuthorityDeps, AuthorityEnv } from './env.js';
import { browserRoutes } from './routes/browser-routes.js';
import { deploymentRoutes } from './routes/deployment-routes.js';
import { installerRoutes } from './routes/installer-routes.js';

/** The setup authority's Hono app, apart from listening, so tests can call `app.request()`. */
export function createAuthorityApp(deps: AuthorityDeps): Hono<AuthorityEnv> {
  const app = new Hono<AuthorityEnv>();
  app.use('*', async (c, next) => {
    const requestId = randomBytes(8).toString('hex');
    c.set('requestId', requestId);
    await next();
    c.header('X-Request-Id', requestId);
    c.header('Cache-Control', 'no-store');
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('Referrer-Policy', 'no-referrer');
  });
  app.get('/health', (c) => c.json({ status: 'ok' }));
  browserRoutes(app, deps);
  installerRoutes(app, deps);
  deploymentRoutes(app, deps);
  app.notFound((c) => sendError(c, new HttpError(404, 'no such route')));
  app.onError((err, c) => {
    if (err instanceof HttpError) return sendError(c, err);
    deps.log({ level: 'error', msg: 'unhandled error', requestId: c.get('requestId'), error: (err as Error)?.name, detail: (err as Error)?.message?.slice(0, 500) });
    return sendError(c, new HttpError(500, `internal error; quote request id ${c.get('requestId')}`));
  });
  return app;
}
