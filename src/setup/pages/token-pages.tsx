import { shortTime } from '../../http/web/components/url.js';
import type { InstallerCommand } from './installer-command.js';
import type { SessionPageData } from './page-data.js';
import { SessionLive } from './session-live.js';
import { OnceSecret, SetupShell, type SetupUser } from './shell.js';

function Command(props: { readonly command: InstallerCommand; readonly file: string }) {
  return (
    <>
      <p>
        On the orchestration host, write the token to a file only you can read (it is pasted on standard input, so it
        never appears in the process list or the shell history):
      </p>
      <pre class="command">
        <code>{props.command.writeToken}</code>
      </pre>
      <p>
        then run the installer (the inventory, transport and work folder are yours; see <code>docs/installer.md</code>),
        and delete <code>{props.file}</code> afterwards:
      </p>
      <pre class="command">
        <code id="installer-command">{props.command.install}</code>
      </pre>
      <p class="muted" id="staging-note">
        {props.command.stagingNote}
      </p>
    </>
  );
}

/** The answer to creating a setup session: the setup token, shown this once, and the installer command. */
export function SessionCreatedPage(props: {
  readonly user: SetupUser;
  readonly sessionId: string;
  readonly setupToken: string;
  readonly expiresAt: string;
  readonly command: InstallerCommand;
  readonly progress: SessionPageData;
  readonly now: string;
}) {
  return (
    <SetupShell
      title="Setup session created"
      current="/setup-sessions"
      user={props.user}
      notice={{
        kind: 'ok',
        text: 'Setup session created. Copy the token now: it is shown only on this page and cannot be shown again.',
      }}
    >
      <h1>
        Setup session <code>{props.sessionId}</code>
      </h1>
      <section class="panel">
        <OnceSecret
          id="setup-token"
          label={`Setup token (single use, valid until ${shortTime(props.expiresAt)})`}
          value={props.setupToken}
        />
        <Command command={props.command} file="setup-token" />
      </section>
      <p>
        <a id="watch-link" href={`/setup-sessions/${props.sessionId}`}>
          Open this session's own page
        </a>{' '}
        (a link you can share; the token is not on it).
      </p>
      <h2>Progress</h2>
      <SessionLive data={props.progress} now={props.now} csrf={props.user.csrf} />
    </SetupShell>
  );
}

/** The answer to revealing a recovery token: the token, shown this once, and the recovery installer command. */
export function RecoveryTokenPage(props: {
  readonly user: SetupUser;
  readonly deploymentId: string;
  readonly sessionId: string;
  readonly recoveryId: string;
  readonly token: string;
  readonly command: InstallerCommand;
}) {
  return (
    <SetupShell
      title="Recovery token"
      current={`/setup-sessions/${props.sessionId}`}
      user={props.user}
      notice={{
        kind: 'ok',
        text:
          'Recovery token revealed (recorded). It is shown only on this page; it works once, while the ' +
          'deployment is central_missing.',
      }}
    >
      <h1>
        Recover deployment <code>{props.deploymentId}</code>
      </h1>
      <section class="panel">
        <OnceSecret id="recovery-token" label={`Recovery token ${props.recoveryId}`} value={props.token} />
        <Command command={props.command} file="recovery-token" />
        <p class="muted">
          The reinstall keeps the deployment id and its approved VMs (it can never widen them); it gets a new identity
          key, a new enrollment epoch and a rotated console credential.
        </p>
      </section>
      <p>
        <a href={`/setup-sessions/${props.sessionId}`}>Back to the deployment</a>: the recovery session appears there
        once the installer claims it.
      </p>
    </SetupShell>
  );
}
