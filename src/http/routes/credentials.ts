import * as v from 'valibot';
import { CREDENTIALS, CredentialViewSchema, type CredentialsState } from '../../projections/credentials.js';
import { route, type Route } from '../route.js';

const listCredentialsRoute = route({
  method: 'get',
  path: '/api/v1/credentials',
  operationId: 'listCredentials',
  summary:
    "Credentials as the log recorded them (fingerprint, roles, created, disabled, removed) with each one's last use " +
    'and history; never a token or hash',
  permission: 'audit:read',
  audit: 'list_credentials',
  success: {
    status: 200,
    description: '`{credentials}`',
    schema: v.strictObject({ credentials: v.array(CredentialViewSchema) }),
  },
  errors: [],
  handle: async (c, { deps }) => {
    await deps.readYourWrites();
    const all = [...deps.reads.credentials.values()];
    return c.json({
      credentials: all.sort((a, b) => a.id.localeCompare(b.id) || a.recordedAt.localeCompare(b.recordedAt)),
    });
  },
});

/**
 * `GET /api/v1/credentials` (admin): the credential registry's recorded history and last uses; it sees every write
 * acknowledged before the request.
 */
export const credentialRoutes: readonly Route[] = [listCredentialsRoute];
