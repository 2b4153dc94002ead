import { OUTCOMES, type Category, type Outcome } from '../events/normalized-event.js';

/** Category of each known event class (docs/collector-protocol.md, "Categories"). */
export const CATEGORY_OF_CLASS: Readonly<Record<string, Category>> = {
  authentication: 'identity',
  account_management: 'identity',
  privilege_escalation: 'identity',
  user_session: 'identity',
  api_access: 'identity',
  ssh_session: 'network',
  kerberos_request: 'identity',
  ntlm_authentication: 'identity',
  network_connection: 'network',
  network_flow: 'network',
  network_tunnel: 'network',
  dns_query: 'network',
  http_request: 'network',
  tls_session: 'network',
  firewall: 'network',
  dhcp_lease: 'network',
  ftp_command: 'network',
  smtp_transaction: 'network',
  rdp_session: 'network',
  dce_rpc_call: 'network',
  process: 'system',
  service: 'system',
  kernel: 'system',
  log: 'system',
  package: 'system',
  scheduled_task: 'system',
  log_record: 'application',
  application_log: 'application',
  host_inventory: 'discovery',
  listening_port: 'discovery',
  software_inventory: 'discovery',
  configuration_change: 'configuration',
  file_transfer: 'data',
  file_access: 'data',
  file_change: 'data',
  smb_file_access: 'data',
  smb_share_mapping: 'data',
  health: 'health',
  heartbeat: 'health',
  collector_status: 'health',
  finding: 'finding',
  detection: 'finding',
  malware: 'finding',
  vulnerability: 'finding',
};

/** Prefix rules tried, in order, when a class is not in the table. */
const PREFIXES: ReadonlyArray<readonly [string, Category]> = [
  ['auth', 'identity'],
  ['account_', 'identity'],
  ['user_', 'identity'],
  ['network_', 'network'],
  ['dns', 'network'],
  ['http', 'network'],
  ['process_', 'system'],
  ['service_', 'system'],
  ['kernel_', 'system'],
  ['file_', 'data'],
  ['config', 'configuration'],
  ['inventory_', 'discovery'],
  ['health_', 'health'],
  ['finding_', 'finding'],
];

/** The category of a submitted event's class: the table, then prefix rules, else `system`. */
export function categoryOf(eventClass: string): Category {
  const exact = Object.hasOwn(CATEGORY_OF_CLASS, eventClass) ? CATEGORY_OF_CLASS[eventClass] : undefined;
  if (exact) return exact;
  for (const [prefix, category] of PREFIXES) if (eventClass.startsWith(prefix)) return category;
  return 'system';
}

/** The outcome of a submitted event: `attributes.outcome` when it is success, failure or unknown; else unknown. */
export function outcomeOf(attributes: Readonly<Record<string, unknown>>): Outcome {
  const o = attributes.outcome;
  return typeof o === 'string' && (OUTCOMES as readonly string[]).includes(o) ? (o as Outcome) : 'unknown';
}
