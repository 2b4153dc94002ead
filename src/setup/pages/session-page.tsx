import { AbandonPanel } from './abandon-panel.js';
import type { SessionPageData } from './page-data.js';
import { SessionLive } from './session-live.js';
import { SetupShell, type SetupUser } from './shell.js';

/** One setup (or recovery) session: its progress, live, and its deployment's current state. */
export function SessionPage(props: { readonly user: SetupUser; readonly data: SessionPageData; readonly now: string }) {
  const s = props.data.session;
  return (
    <SetupShell title={`Session ${s.id}`} current={`/setup-sessions/${s.id}`} user={props.user}>
      <h1>
        {s.kind === 'recovery' ? 'Recovery session' : 'Setup session'} <code>{s.id}</code>
      </h1>
      <p class="muted">
        Created by {s.userId}. This page updates itself every few seconds; without JavaScript, reload it.
      </p>
      <SessionLive data={props.data} now={props.now} csrf={props.user.csrf} />
      {props.data.deployment ? <AbandonPanel d={props.data.deployment} csrf={props.user.csrf} /> : null}
    </SetupShell>
  );
}
