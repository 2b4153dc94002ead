import { isIP } from 'node:net';
import * as v from 'valibot';
import { RegistrySchema, type Credential } from '../../auth/registry.js';
import { hashToken } from '../../auth/tokens.js';
import { AgentConfigSchema } from '../collector/config.js';
import { ConfigSchema } from '../../services/config-schema.js';
import { formatIssues } from '../../kernel/issues.js';
import { EnrollmentGrantsSchema } from '../../services/enrollment-grants.js';
import { UNIT_NAMES, UNIT_USERS, execStart, renderUnit, type UnitKind } from './units.js';

/** The provisioning the authority releases after the proof (docs/setup-protocol.md). */
export interface Provisioning {
  deployment_id: string;
  enrollment_epoch: number;
  authority_url: string;
  central: { vm_id: string; console_credential: { id: string; token: string; roles: string[]; generation: number } };
  collectors: Array<{
    vm_id: string;
    collector_id: string;
    enrollment_token: string;
    expires_at: string;
    enrollment_epoch: number;
  }>;
}

/** Where Vigil's files go on a VM (below the VM's prefix, `/` by default). */
export const VM_PATHS = {
  config: '/etc/vigil/vigil.config.json',
  identityKey: '/etc/vigil/secrets/deployment-identity.key',
  credentials: '/etc/vigil/secrets/credentials.json',
  enrollmentGrants: '/etc/vigil/secrets/enrollment-grants.json',
  stateDir: '/var/lib/vigil',
  store: '/var/lib/vigil/store',
  fleetKey: '/etc/vigil/fleet-bootstrap.pub',
  collectorConfig: '/etc/vigil/collector/collector.json',
  collectorToken: '/etc/vigil/collector/secrets/enrollment-token',
  collectorBearer: '/etc/vigil/collector/secrets/bearer-token',
  collectorStateDir: '/var/lib/vigil-collector',
  unitDir: '/etc/systemd/system',
} as const;

/** One file of a VM's bundle; `path` is absolute on the VM, below its prefix. */
export interface BundleFile {
  readonly path: string;
  readonly content: string;
  readonly mode: number;
}

/** Everything the installer puts on one VM: files, the state directory, the unit it starts. */
export interface VmBundle {
  readonly vmId: string;
  readonly role: 'central' | 'collector';
  readonly files: readonly BundleFile[];
  /** Created 0700 and owned by the service user; the unit's only writable path. */
  readonly stateDir: string;
  /** Directories the service user must own (config and secrets it reads; /etc/vigil is 0700, so all of it). */
  readonly ownedDirs: readonly string[];
  readonly unit: {
    readonly kind: UnitKind;
    readonly name: string;
    readonly user: string;
    readonly execStart: readonly string[];
  };
}

/** What the bundles are built from besides the provisioning. */
export interface BundleOptions {
  /** The VM's installation prefix as seen by the transport (`/` on a real VM). */
  readonly root: (vmId: string) => string;
  readonly vigilExec: string;
  readonly listen: { readonly host: string; readonly port: number };
  readonly snapshotIntervalSeconds: number;
  readonly instanceUrl: string;
  /** Addresses of the VMs in scope: the central instance marks requests from elsewhere `unapproved_device`. */
  readonly vmAddresses: readonly string[];
  readonly identityKeyPem: string;
  readonly fleetPublicKey: string;
  /** Syslog-format files every collector tails besides the journal (absolute paths on the VMs). */
  readonly collectorFiles: readonly string[];
  /** One bearer token of role `collector` per collector id, generated on the orchestration host. */
  readonly collectorTokens: ReadonlyMap<string, string>;
}

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** Validates a file's content with the schema its reader uses at start, so the bundle cannot drift from the loaders. */
function checked<T>(schema: v.GenericSchema<unknown, T>, value: unknown, what: string): unknown {
  const parsed = v.safeParse(schema, value);
  if (!parsed.success)
    throw new Error(`the installer built an invalid ${what}:\n  ${formatIssues(parsed.issues).join('\n  ')}`);
  return value;
}

const under = (root: string, path: string) => `${root.replace(/\/+$/, '')}${path}`;

/** The CIDR of one address (IPv4 /32, IPv6 /128); host names are left out. */
function hostCidr(address: string): string | undefined {
  const kind = isIP(address);
  return kind === 4 ? `${address}/32` : kind === 6 ? `${address}/128` : undefined;
}

/**
 * The central VM's bundle: the identity key, the credential registry (the console credential and
 * one credential per collector, bound to its collector id; hashes only), the enrollment grants
 * (hashes only), the instance configuration with its `deployment` block, and the unit.
 */
export function centralBundle(p: Provisioning, o: BundleOptions): VmBundle {
  const vm = p.central.vm_id;
  const at = (path: string) => under(o.root(vm), path);
  const console = p.central.console_credential;
  const credentials: Credential[] = [
    {
      id: console.id,
      tokenHash: hashToken(console.token),
      roles: console.roles as Credential['roles'],
      disabled: false,
    },
    ...p.collectors.map((c): Credential => {
      const token = o.collectorTokens.get(c.collector_id);
      if (!token) throw new Error(`no collector credential generated for ${c.collector_id}`);
      return {
        id: c.collector_id,
        tokenHash: hashToken(token),
        roles: ['collector'],
        disabled: false,
        collectorId: c.collector_id,
      };
    }),
  ];
  const grants = {
    deployment_id: p.deployment_id,
    enrollment_epoch: p.enrollment_epoch,
    collectors: p.collectors.map((c) => ({
      collector_id: c.collector_id,
      vm_id: c.vm_id,
      token_sha256: hashToken(c.enrollment_token),
      expires_at: c.expires_at,
    })),
  };
  const cidrs = o.vmAddresses.map(hostCidr).filter((c): c is string => c !== undefined);
  const config = {
    server: {
      host: o.listen.host,
      port: o.listen.port,
      approvedSourceAddresses: [...new Set(['127.0.0.0/8', '::1/128', ...cidrs])],
    },
    auth: { credentialsFile: at(VM_PATHS.credentials) },
    storage: { path: at(VM_PATHS.store) },
    deployment: {
      authorityUrl: p.authority_url,
      deploymentId: p.deployment_id,
      identityKeyFile: at(VM_PATHS.identityKey),
      intervalSeconds: o.snapshotIntervalSeconds,
      instanceUrl: o.instanceUrl,
      centralVmId: vm,
      enrollmentGrantsFile: at(VM_PATHS.enrollmentGrants),
    },
  };
  const unit = {
    vigilExec: o.vigilExec,
    configFile: at(VM_PATHS.config),
    writable: [at(VM_PATHS.stateDir)],
    user: UNIT_USERS.instance,
  };
  return {
    vmId: vm,
    role: 'central',
    stateDir: VM_PATHS.stateDir,
    ownedDirs: ['/etc/vigil'],
    files: [
      { path: VM_PATHS.fleetKey, content: `${o.fleetPublicKey}\n`, mode: 0o644 },
      { path: VM_PATHS.identityKey, content: o.identityKeyPem, mode: 0o600 },
      {
        path: VM_PATHS.credentials,
        content: json(checked(RegistrySchema, { credentials }, 'credential registry')),
        mode: 0o600,
      },
      {
        path: VM_PATHS.enrollmentGrants,
        content: json(checked(EnrollmentGrantsSchema, grants, 'enrollment grants file')),
        mode: 0o600,
      },
      { path: VM_PATHS.config, content: json(checked(ConfigSchema, config, 'instance configuration')), mode: 0o600 },
      { path: `${VM_PATHS.unitDir}/${UNIT_NAMES.instance}`, content: renderUnit('instance', unit), mode: 0o644 },
    ],
    unit: { kind: 'instance', name: UNIT_NAMES.instance, user: unit.user, execStart: execStart('instance', unit) },
  };
}

/**
 * One collector VM's bundle: its single-use enrollment token and its own bearer credential (0600),
 * the agent configuration (central URL, collector id, state directory, both token files), the unit.
 */
export function collectorBundles(p: Provisioning, o: BundleOptions): VmBundle[] {
  return p.collectors.map((c) => {
    const at = (path: string) => under(o.root(c.vm_id), path);
    const bearer = o.collectorTokens.get(c.collector_id);
    if (!bearer) throw new Error(`no collector credential generated for ${c.collector_id}`);
    const config = {
      server: o.instanceUrl,
      collectorId: c.collector_id,
      stateDir: at(VM_PATHS.collectorStateDir),
      bearerTokenFile: at(VM_PATHS.collectorBearer),
      enrollmentTokenFile: at(VM_PATHS.collectorToken),
      files: o.collectorFiles.map(at),
    };
    const unit = {
      vigilExec: o.vigilExec,
      configFile: at(VM_PATHS.collectorConfig),
      writable: [at(VM_PATHS.collectorStateDir)],
      user: UNIT_USERS.collector,
    };
    return {
      vmId: c.vm_id,
      role: 'collector' as const,
      stateDir: VM_PATHS.collectorStateDir,
      ownedDirs: ['/etc/vigil'],
      files: [
        { path: VM_PATHS.fleetKey, content: `${o.fleetPublicKey}\n`, mode: 0o644 },
        { path: VM_PATHS.collectorToken, content: `${c.enrollment_token}\n`, mode: 0o600 },
        { path: VM_PATHS.collectorBearer, content: `${bearer}\n`, mode: 0o600 },
        {
          path: VM_PATHS.collectorConfig,
          content: json(checked(AgentConfigSchema, config, 'collector configuration')),
          mode: 0o600,
        },
        { path: `${VM_PATHS.unitDir}/${UNIT_NAMES.collector}`, content: renderUnit('collector', unit), mode: 0o644 },
      ],
      unit: { kind: 'collector', name: UNIT_NAMES.collector, user: unit.user, execStart: execStart('collector', unit) },
    };
  });
}
