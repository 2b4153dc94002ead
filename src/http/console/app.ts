import { randomBytes } from 'node:crypto';
import type { Hono } from 'hono';
import type { AppDeps, AppEnv, NetPolicy } from '../env.js';
import { honoPath } from '../route.js';
import { createCsrf } from '../web/csrf.js';
import { registerAssets } from '../web/static-assets.js';
import { registerPages } from './page-route.js';
import { CONSOLE_PAGES } from './pages/index.js';
import { createSessionKeeper } from './session.js';
import { registerSignIn } from './sign-in.js';

/** The console's operations on the app besides the API's (`METHOD /hono/path`), for the route-table test. */
export function consoleOperations(): string[] {
  return [
    'GET /assets/:name',
    'GET /sign-in',
    'POST /sign-in',
    'POST /sign-out',
    ...CONSOLE_PAGES.map((p) => `${p.method.toUpperCase()} ${honoPath(p.path)}`),
  ];
}

/**
 * Serves the analyst console at `/` beside the API: its assets, signing in and out, and every page
 * of the page table. CSRF tokens are keyed per process (a restart asks open forms to reload).
 */
export function registerConsole(app: Hono<AppEnv>, deps: AppDeps, net: NetPolicy): void {
  const csrf = createCsrf(randomBytes(32));
  const sessions = createSessionKeeper(deps, net);
  registerAssets(app);
  registerSignIn(app, deps, net, csrf, sessions);
  registerPages(app, deps, net, csrf, sessions, CONSOLE_PAGES);
}
