import { Hono } from 'hono';
import { HttpError, sendError } from '../http/errors.js';
import { errorHandler, requestIds } from '../http/middleware.js';
import type { AuthorityDeps, AuthorityEnv } from './env.js';
import { pageRoutes } from './pages/page-routes.js';
import { browserRoutes } from './routes/browser-routes.js';
import { deploymentRoutes } from './routes/deployment-routes.js';
import { installerRoutes } from './routes/installer-routes.js';
import { createSignInThrottle } from './sign-in-throttle.js';

/** The setup authority's Hono app, apart from listening, so tests can call `app.request()`. */
export function createAuthorityApp(deps: AuthorityDeps): Hono<AuthorityEnv> {
  const app = new Hono<AuthorityEnv>();
  app.use('*', requestIds());
  app.get('/health', (c) => c.json({ status: 'ok' }));
  const throttle = createSignInThrottle(deps.now, deps.log);
  browserRoutes(app, deps, throttle);
  pageRoutes(app, deps, throttle);
  installerRoutes(app, deps);
  deploymentRoutes(app, deps);
  app.notFound((c) => sendError(c, new HttpError(404, 'no such route')));
  app.onError(errorHandler(deps.log));
  return app;
}
