import { CSRF_FIELD } from '../../web/csrf.js';

/** The sign-in page: a bearer token pasted once into a password field, posted in the form body (never a URL). */
export function SignInPage(props: { readonly next: string; readonly error?: string; readonly csrf: string }) {
  return (
    <section class="signin panel">
      <h1>Sign in to the console</h1>
      <p>
        Paste a Vigil API token (<code>vgl_…</code>) once. The server checks it and gives this browser a session cookie;
        the token itself is not kept by the browser or the server.
      </p>
      {props.error ? (
        <p class="notice notice-error" role="alert">
          {props.error}
        </p>
      ) : null}
      <form method="post" action="/sign-in" autocomplete="off">
        <input type="hidden" name={CSRF_FIELD} value={props.csrf} />
        <input type="hidden" name="next" value={props.next} />
        <label for="token">API token</label>
        <input
          id="token"
          name="token"
          type="password"
          required
          maxlength={512}
          autocomplete="off"
          spellcheck={false}
          autofocus
        />
        <button type="submit">Sign in</button>
      </form>
      <p class="muted">
        Signed in through the mesh or on the instance's own machine with loopback administration? Then no token is
        needed: <a href="/">open the console</a>.
      </p>
    </section>
  );
}
