import type { Child } from 'hono/jsx';
import { Layout } from '../../http/web/layout.js';

/** Who is signed in to the authority, as the header shows it. */
export interface SetupUser {
  readonly name: string;
  readonly tenantId: string;
  readonly csrf: string;
}

/** The setup authority's page shell: the shared layout with the authority's brand and navigation. */
export function SetupShell(props: {
  readonly title: string;
  readonly current: string;
  readonly user?: SetupUser;
  readonly notice?: { kind: 'ok' | 'error'; text: string };
  readonly children?: Child;
}) {
  const u = props.user;
  return (
    <Layout
      title={props.title}
      brand="Vigil setup"
      nav={u ? [{ href: '/', label: 'Deployments' }] : []}
      current={props.current}
      user={u ? { name: u.name, roles: [`tenant ${u.tenantId}`], authentication: 'account token' } : undefined}
      signOut={u ? { action: '/sign-out', csrf: u.csrf } : undefined}
      notice={props.notice}
    >
      {props.children}
    </Layout>
  );
}

/** A secret shown once: selectable text, labelled, never part of a URL or a live region. */
export function OnceSecret(props: { readonly label: string; readonly value: string; readonly id: string }) {
  return (
    <div class="secret">
      <label for={props.id}>{props.label}</label>
      <input id={props.id} type="text" readonly value={props.value} autocomplete="off" spellcheck={false} />
    </div>
  );
}
