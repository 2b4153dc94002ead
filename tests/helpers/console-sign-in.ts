import type { TestInstance } from './instance.js';

/** The value of cookie `name` in a response's Set-Cookie headers. */
export function cookieFrom(res: Response, name: string): string | undefined {
  for (const line of res.headers.getSetCookie()) {
    const m = new RegExp(`^${name.replace(/[-]/g, '\\$&')}=([^;]*)`).exec(line);
    if (m) return m[1];
  }
  return undefined;
}

/** Signs in through the sign-in form as a browser would (its pre-session cookie and CSRF token first). */
export async function signIn(t: TestInstance, token: string, base = 'http://localhost'): Promise<{ res: Response; cookie: string | undefined; secret: string | undefined }> {
  const page = await t.app.request(`${base}/sign-in`);
  const pre = cookieFrom(page, 'vigil-sign-in')!;
  const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.text())![1]!;
  const body = new URLSearchParams({ token, _csrf: csrf, next: '/alerts' }).toString();
  const res = await t.app.request(`${base}/sign-in`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(body.length), cookie: `vigil-sign-in=${pre}` }, body,
  });
  const name = base.startsWith('https') ? '__Host-vigil-console' : 'vigil-console';
  const secret = cookieFrom(res, name);
  return { res, secret, cookie: secret ? `${name}=${secret}` : undefined };
}
