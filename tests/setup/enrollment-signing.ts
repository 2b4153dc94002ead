import type { KeyObject } from 'node:crypto';
import { signPayload } from '../../src/services/deployment-reporter.js';
import { ENROLLMENT_DOMAIN } from '../../src/setup/identity-key.js';

/** A redeemer that acts as the central instance: posts a signed enrollment redemption to the authority. */
export function enrollmentRedeemer(url: string, deploymentId: string) {
  return async (key: KeyObject, collectorId: string, token: string, collectorPem: string) => {
    const body = signPayload(ENROLLMENT_DOMAIN, { deployment_id: deploymentId, collector_id: collectorId, enrollment_token: token, collector_public_key_spki_pem: collectorPem }, key);
    const res = await fetch(`${url}/v1/deployments/${deploymentId}/enrollments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: await res.json() };
  };
}
