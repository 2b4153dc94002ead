import { shortTime } from '../../http/web/components/url.js';
import { CSRF_FIELD } from '../../http/web/csrf.js';
import type { DeploymentView } from '../projections/deployments.js';

/**
 * The session page's abandon action: for a deployment that is not live (its central instance does not report), give it
 * up with a reason; recorded, and hidden from the overview from then on. An abandoned deployment says who and why.
 */
export function AbandonPanel(props: { readonly d: DeploymentView; readonly csrf: string }) {
  const { d } = props;
  if (d.abandoned)
    return (
      <section class="panel" aria-labelledby="abandon-title">
        <h2 id="abandon-title">Abandoned</h2>
        <p>
          Abandoned {shortTime(d.abandoned.at)} by <code>{d.abandoned.principal}</code> ({d.abandoned.via}):{' '}
          {d.abandoned.reason}
        </p>
      </section>
    );
  if (d.status === 'reporting') return null;
  return (
    <section class="panel" aria-labelledby="abandon-title">
      <h2 id="abandon-title">Abandon this deployment</h2>
      <p>
        If this installation will not be finished (the installer stopped and will not be resumed), abandon it: it is
        hidden from the overview, its installer session accepts nothing more, and nothing on the VMs is changed.
      </p>
      <form method="post" action={`/deployments/${d.id}/abandon`}>
        <input type="hidden" name={CSRF_FIELD} value={props.csrf} />
        <label>
          Reason <input type="text" name="reason" maxlength={500} required />
        </label>
        <label>
          <input type="checkbox" name="confirm" value="abandon" required /> Abandon <code>{d.id}</code>; this is
          recorded and cannot be undone.
        </label>
        <button type="submit">Abandon deployment</button>
      </form>
    </section>
  );
}
