import type { Context } from 'hono';
import type { Child } from 'hono/jsx';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { CSRF_FIELD } from './csrf.js';
import { assetUrl } from './static-assets.js';

/** One entry of the navigation bar. */
export interface NavItem {
  readonly href: string;
  readonly label: string;
}

/** Who is signed in, as the header shows it. */
export interface PageUser {
  readonly name: string;
  readonly roles: readonly string[];
  readonly authentication: string;
}

/** What the page shell needs besides its content. */
export interface LayoutProps {
  /** The page's own title (the browser tab reads "title · brand"). */
  readonly title: string;
  /** The product area: "Vigil console", "Vigil setup". */
  readonly brand: string;
  readonly nav: readonly NavItem[];
  /** The path of the current page, to mark its navigation entry. */
  readonly current: string;
  readonly user?: PageUser;
  /** Where the sign-out form posts, with the CSRF token it carries; absent when there is nothing to end. */
  readonly signOut?: { readonly action: string; readonly csrf: string };
  /** A one-line message above the content (the result of the last action). */
  readonly notice?: { readonly kind: 'ok' | 'error'; readonly text: string };
  readonly children?: Child;
}

/**
 * The shell of every page: the stylesheet and ES module from `/assets/`, the header, the navigation and the content.
 */
export function Layout(props: LayoutProps) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${props.title} · ${props.brand}`}</title>
        <link rel="stylesheet" href={assetUrl('vigil.css')} />
        <script type="module" src={assetUrl('vigil.js')}></script>
      </head>
      <body>
        <header class="top">
          <a class="brand" href={props.nav[0]?.href ?? '/'}>
            {props.brand}
          </a>
          <nav aria-label="Main">
            <ul>
              {props.nav.map((n) => (
                <li>
                  <a href={n.href} aria-current={isCurrent(n.href, props.current) ? 'page' : undefined}>
                    {n.label}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
          {props.user ? (
            <div class="who">
              <span class="who-name">{props.user.name}</span>
              <span class="who-meta">
                {props.user.roles.join(', ')} · {props.user.authentication}
              </span>
              {props.signOut ? (
                <form method="post" action={props.signOut.action} class="inline">
                  <input type="hidden" name={CSRF_FIELD} value={props.signOut.csrf} />
                  <button type="submit" class="link">
                    Sign out
                  </button>
                </form>
              ) : null}
            </div>
          ) : null}
        </header>
        <main id="main">
          {props.notice ? (
            <p class={`notice notice-${props.notice.kind}`} role="status">
              {props.notice.text}
            </p>
          ) : null}
          {props.children}
        </main>
      </body>
    </html>
  );
}

/** Whether a navigation entry is the current page or one of its sub-pages. */
function isCurrent(href: string, current: string): boolean {
  if (href === '/') return current === '/';
  return current === href || current.startsWith(`${href}/`);
}

/** A complete HTML document of a page element. */
export function documentOf(page: Child): string {
  return `<!doctype html>${String(page)}`;
}

/** Answers a page: the HTML document of `page` with `status`. */
export function sendPage(c: Context, page: Child, status: ContentfulStatusCode = 200): Response {
  return c.html(documentOf(page), status);
}
