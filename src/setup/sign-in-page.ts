import { createHash } from 'node:crypto';

const SCRIPT = `document.getElementById('f').addEventListener('submit', async (e) => {
  e.preventDefault();
  const token = document.getElementById('t').value.trim();
  const r = await fetch('/v1/browser-sessions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }), credentials: 'same-origin' });
  document.getElementById('t').value = '';
  const body = await r.json();
  document.getElementById('m').textContent = r.ok ? 'Signed in as ' + body.display_name + '.' : (body.error || 'sign-in failed');
});`;

/** The Content-Security-Policy of the sign-in page: only its own inline script runs. */
export const SIGN_IN_CSP = `default-src 'none'; script-src 'sha256-${createHash('sha256').update(SCRIPT).digest('base64')}'; connect-src 'self'; style-src 'unsafe-inline'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'`;

/** The sign-in page: the account token is typed once and sent in a JSON body, never in a URL. */
export const SIGN_IN_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Vigil setup: sign in</title></head>
<body style="font-family: sans-serif; max-width: 32rem; margin: 4rem auto">
<h1>Vigil setup authority</h1>
<form id="f"><label>Account token <input id="t" type="password" autocomplete="off" required></label> <button>Sign in</button></form>
<p id="m" role="status"></p>
<script>${SCRIPT}</script>
</body></html>`;
