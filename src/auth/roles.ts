/** The roles of spec 5.2. */
export const ROLES = ['console', 'viewer', 'ingestor', 'collector', 'analyst', 'rule_admin', 'admin'] as const;
/** One role. */
export type Role = (typeof ROLES)[number];

/** Permissions checked by routes; each route names exactly one. */
export const PERMISSIONS = [
  'principal:read',
  'console:read',
  'health:read',
  'graph:read',
  'plan:read',
  'rules:read',
  'rules:write',
  'exceptions:write',
  'events:read',
  'alerts:read',
  'alerts:review',
  'incidents:read',
  'incidents:promote',
  'ingest',
  'collector:submit',
  'audit:read',
  'collectors:admin',
  'log:read',
  'log:cosign',
  'log:verify',
  'exports:read',
  'health:detail',
  'metrics:read',
] as const;
/** One permission. */
export type Permission = (typeof PERMISSIONS)[number];

const VIEWER: Permission[] = [
  'health:read',
  'graph:read',
  'plan:read',
  'rules:read',
  'events:read',
  'alerts:read',
  'incidents:read',
  'log:read',
  'console:read',
];

/** What each role may do (spec 5.2); `admin` holds every permission; every principal may read itself. */
export const ROLE_PERMISSIONS: Readonly<Record<Role, readonly Permission[]>> = {
  console: ['console:read'],
  viewer: [...VIEWER, 'metrics:read'],
  ingestor: ['ingest'],
  collector: ['collector:submit'],
  analyst: [...VIEWER, 'alerts:review', 'incidents:promote', 'exceptions:write'],
  rule_admin: ['graph:read', 'plan:read', 'rules:read', 'rules:write', 'exceptions:write'],
  admin: [...PERMISSIONS],
};

/** Whether any of `roles` grants `permission`. */
export function allows(roles: readonly Role[], permission: Permission): boolean {
  if (permission === 'principal:read') return roles.length > 0;
  return roles.some((r) => ROLE_PERMISSIONS[r].includes(permission));
}
