import { createPrivateKey, generateKeyPairSync, sign } from 'node:crypto';
import { generateToken } from '../../auth/tokens.js';
import { proofMessage } from '../../setup/identity-key.js';
import type { InstallationScope } from '../../setup/scope.js';
import type { Provisioning } from './bundle.js';
import { InstallDeclinedError, type InstallOptions } from './install-options.js';
import { isUnfinished, type InstallState } from './install-state.js';
import type { InventoryVm } from './inventory.js';
import { formatPlan, type InstallPlan } from './plan.js';
import { ChecksFailedError, runPreflight } from './preflight.js';

interface Claimed {
  session_id: string;
  session_token: string;
  challenge: string;
  deployment_id: string;
  installation_scope: InstallationScope;
}

/** A temporary Ed25519 fleet key as an OpenSSH public key line (the private half never leaves this run). */
function fleetPublicKey(): string {
  const raw = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'der' }).subarray(12);
  const len = (n: number) => Buffer.from([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);
  const blob = Buffer.concat([len(11), Buffer.from('ssh-ed25519'), len(32), raw]);
  return `ssh-ed25519 ${blob.toString('base64')} vigil-fleet-bootstrap`;
}

async function claim(o: InstallOptions, scope: InstallationScope, identityPem: string): Promise<Claimed> {
  const deployment_identity = { public_key_spki_pem: identityPem };
  if (o.recovery) return o.client.post<Claimed>('/v1/recovery/claim', { recovery_token: o.token, deployment_identity });
  await o.client.post('/v1/setup-sessions/connect', { setup_token: o.token });
  return o.client.post<Claimed>('/v1/setup-sessions/claim', {
    setup_token: o.token,
    deployment_identity,
    installation_scope: scope,
  });
}

/** Runs the checks and stops (nothing claimed, nothing changed) when any fails. */
export async function check(
  o: InstallOptions,
  plan: InstallPlan,
  vms: readonly InventoryVm[],
  probeVms: readonly string[],
) {
  const t = o.transport(probeVms, vms);
  const results = await runPreflight({
    client: o.client,
    plan,
    vms,
    probeVms,
    probe: t.probe,
    serviceManager: o.serviceManager,
    centralPort: o.centralListen.port === 0 ? 4173 : o.centralListen.port,
    portMayBeOurs: o.recovery || o.resume,
  });
  o.reportChecks(results);
  if (results.some((r) => r.status === 'fail')) throw new ChecksFailedError(results);
}

/** Confirms the plan, checks and claims: the new run's state, saved before anything else happens. */
export async function start(o: InstallOptions, vms: readonly InventoryVm[], plan: InstallPlan): Promise<InstallState> {
  const previous = o.state.load();
  if (previous && isUnfinished(previous))
    throw new Error(
      `an unfinished install of deployment ${previous.deploymentId} is kept in ${o.state.path}: continue it with ` +
        `--resume or give it up with --abandon`,
    );
  if (!(await o.confirm(formatPlan(plan, o.inventory.name, o.recovery), plan)))
    throw new InstallDeclinedError('the plan was not confirmed; nothing was claimed or changed');
  // Before a recovery claim the approved scope is unknown: probe only VMs an earlier run here had approved.
  const known = o.recovery ? (previous?.scope.vms ?? []) : plan.scope.vms;
  await check(
    o,
    plan,
    vms,
    plan.scope.vms.filter((id) => known.includes(id)),
  );
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const identity = {
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
  const c = await claim(o, plan.scope, identity.publicPem);
  const s: InstallState = {
    version: 1,
    status: 'running',
    setupUrl: o.setupUrl,
    recovery: o.recovery,
    sessionId: c.session_id,
    sessionToken: c.session_token,
    challenge: c.challenge,
    deploymentId: c.deployment_id,
    scope: c.installation_scope,
    identity,
    bootstrapKeyPublished: false,
    phases: [],
    vms: {},
  };
  o.state.save(s);
  o.progress({ msg: 'claimed', deployment_id: s.deploymentId, session_id: s.sessionId, vms: s.scope.vms });
  const unchecked = s.scope.vms.filter((id) => !known.includes(id));
  if (unchecked.length > 0) await check(o, { ...plan, scope: s.scope }, vms, unchecked);
  return s;
}

/** Proves possession once and keeps the provisioning in the state; the console credential is handed out at once. */
export async function prove(o: InstallOptions, s: InstallState): Promise<NonNullable<InstallState['proven']>> {
  if (s.proven) return s.proven;
  const key = createPrivateKey(s.identity.privatePem);
  const signature = sign(null, proofMessage(s.sessionId, s.deploymentId, s.challenge), key).toString('base64');
  const { provisioning: p } = await o.client.post<{ provisioning: Provisioning }>(
    `/v1/setup-sessions/${s.sessionId}/prove`,
    { signature },
    s.sessionToken,
  );
  s.proven = {
    provisioning: p as unknown as { deployment_id: string },
    fleetPublicKey: fleetPublicKey(),
    collectorTokens: Object.fromEntries(p.collectors.map((col) => [col.collector_id, generateToken()])),
  };
  o.state.save(s);
  o.onConsoleCredential(s.deploymentId, p.central.console_credential);
  return s.proven;
}
