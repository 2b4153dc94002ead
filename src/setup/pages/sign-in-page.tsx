import { CSRF_FIELD } from '../../http/web/csrf.js';
import { SetupShell } from './shell.js';

/** The sign-in page: the account token is typed once and posted in a form body, never put in a URL. */
export function SignInPage(props: { readonly next: string; readonly csrf: string; readonly error?: string }) {
  return (
    <SetupShell
      title="Sign in"
      current="/sign-in"
      notice={props.error ? { kind: 'error', text: props.error } : undefined}
    >
      <section class="signin panel">
        <h1>Vigil setup authority</h1>
        <p class="muted">
          Sign in with the account token from <code>vigil setup-authority account add</code>. It is checked once; the
          browser keeps only a session cookie.
        </p>
        <form method="post" action="/sign-in" autocomplete="off">
          <input type="hidden" name={CSRF_FIELD} value={props.csrf} />
          <input type="hidden" name="next" value={props.next} />
          <label for="token">Account token</label>
          <input
            id="token"
            name="token"
            type="password"
            autocomplete="off"
            required
            maxlength={128}
            spellcheck={false}
            autofocus
          />
          <button type="submit">Sign in</button>
        </form>
      </section>
    </SetupShell>
  );
}
