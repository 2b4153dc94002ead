/**
 * Windows Event Log as Sigma sees it: which channel each `product: windows` service reads, and which
 * channel and event ids each category is (after pySigma's `windows` and `sysmon` pipelines). Events
 * arrive through the OpenTelemetry Collector's `windowseventlog` receiver (docs/windows.md).
 */

/** The Sysmon channel; its event ids are the Windows categories below. */
export const SYSMON_CHANNEL = 'Microsoft-Windows-Sysmon/Operational';

/** `product: windows, service: X` -> the channels it reads (compared lower-cased). */
export const WINDOWS_SERVICE_CHANNELS: Readonly<Record<string, readonly string[]>> = {
  security: ['Security'],
  system: ['System'],
  application: ['Application'],
  sysmon: [SYSMON_CHANNEL],
  powershell: ['Microsoft-Windows-PowerShell/Operational', 'PowerShellCore/Operational'],
  'powershell-classic': ['Windows PowerShell'],
  taskscheduler: ['Microsoft-Windows-TaskScheduler/Operational'],
  wmi: ['Microsoft-Windows-WMI-Activity/Operational'],
  'dns-server': ['DNS Server'],
  'dns-server-analytic': ['Microsoft-Windows-DNS-Server/Analytical'],
  'dns-client': ['Microsoft-Windows-DNS Client Events/Operational'],
  'driver-framework': ['Microsoft-Windows-DriverFrameworks-UserMode/Operational'],
  ntlm: ['Microsoft-Windows-NTLM/Operational'],
  dhcp: ['Microsoft-Windows-DHCP-Server/Operational'],
  applocker: [
    'Microsoft-Windows-AppLocker/MSI and Script',
    'Microsoft-Windows-AppLocker/EXE and DLL',
    'Microsoft-Windows-AppLocker/Packaged app-Deployment',
    'Microsoft-Windows-AppLocker/Packaged app-Execution',
  ],
  'msexchange-management': ['MSExchange Management'],
  'printservice-admin': ['Microsoft-Windows-PrintService/Admin'],
  'printservice-operational': ['Microsoft-Windows-PrintService/Operational'],
  'codeintegrity-operational': ['Microsoft-Windows-CodeIntegrity/Operational'],
  'smbclient-security': ['Microsoft-Windows-SmbClient/Security'],
  'smbclient-connectivity': ['Microsoft-Windows-SmbClient/Connectivity'],
  'firewall-as': ['Microsoft-Windows-Windows Firewall With Advanced Security/Firewall'],
  'bits-client': ['Microsoft-Windows-Bits-Client/Operational'],
  windefend: ['Microsoft-Windows-Windows Defender/Operational'],
  'terminalservices-localsessionmanager': ['Microsoft-Windows-TerminalServices-LocalSessionManager/Operational'],
  'microsoft-servicebus-client': ['Microsoft-ServiceBus-Client'],
  ldap_debug: ['Microsoft-Windows-LDAP-Client/Debug'],
  'security-mitigations': [
    'Microsoft-Windows-Security-Mitigations/Kernel Mode',
    'Microsoft-Windows-Security-Mitigations/User Mode',
  ],
  'diagnosis-scripted': ['Microsoft-Windows-Diagnosis-Scripted/Operational'],
  'shell-core': ['Microsoft-Windows-Shell-Core/Operational'],
  openssh: ['OpenSSH/Operational'],
  bitlocker: ['Microsoft-Windows-BitLocker/BitLocker Management'],
  vhdmp: ['Microsoft-Windows-VHDMP/Operational'],
  'appxdeployment-server': ['Microsoft-Windows-AppXDeploymentServer/Operational'],
  'lsa-server': ['Microsoft-Windows-LSA/Operational'],
  'appxpackaging-om': ['Microsoft-Windows-AppxPackaging/Operational'],
  'appmodel-runtime': ['Microsoft-Windows-AppModel-Runtime/Admin'],
  capi2: ['Microsoft-Windows-CAPI2/Operational'],
  'certificateservicesclient-lifecycle-system': [
    'Microsoft-Windows-CertificateServicesClient-Lifecycle-System/Operational',
  ],
  'kernel-shimengine': [
    'Microsoft-Windows-Kernel-ShimEngine/Operational',
    'Microsoft-Windows-Kernel-ShimEngine/Diagnostic',
  ],
  'iis-configuration': ['Microsoft-IIS-Configuration/Operational'],
  'hyper-v-worker': ['Microsoft-Windows-Hyper-V-Worker'],
  'sysmon-error': [SYSMON_CHANNEL],
};

/** One source of a Windows category: a channel, its event ids, and an optional EventType test (Sysmon registry). */
interface CategorySource {
  readonly channel: string;
  readonly ids: readonly number[];
  readonly eventTypes?: readonly string[];
}

const sysmon = (ids: number[], eventTypes?: string[]): CategorySource => ({
  channel: SYSMON_CHANNEL,
  ids,
  ...(eventTypes ? { eventTypes } : {}),
});
const POWERSHELL = ['Microsoft-Windows-PowerShell/Operational', 'PowerShellCore/Operational'];

/** `product: windows, category: X` -> the channel and event ids that are that category. */
export const WINDOWS_CATEGORIES: Readonly<Record<string, readonly CategorySource[]>> = {
  process_creation: [sysmon([1]), { channel: 'Security', ids: [4688] }],
  file_change: [sysmon([2])],
  network_connection: [sysmon([3])],
  sysmon_status: [sysmon([4, 16])],
  process_termination: [sysmon([5])],
  driver_load: [sysmon([6])],
  image_load: [sysmon([7])],
  create_remote_thread: [sysmon([8])],
  raw_access_thread: [sysmon([9])],
  process_access: [sysmon([10])],
  file_event: [sysmon([11])],
  registry_add: [sysmon([12], ['CreateKey'])],
  registry_delete: [sysmon([12], ['DeleteKey', 'DeleteValue'])],
  registry_set: [sysmon([13])],
  registry_rename: [sysmon([14])],
  registry_event: [sysmon([12, 13, 14])],
  create_stream_hash: [sysmon([15])],
  pipe_created: [sysmon([17, 18])],
  wmi_event: [sysmon([19, 20, 21])],
  dns_query: [sysmon([22])],
  file_delete: [sysmon([23, 26])],
  clipboard_capture: [sysmon([24])],
  process_tampering: [sysmon([25])],
  file_block_executable: [sysmon([27])],
  file_block_shredding: [sysmon([28])],
  file_executable_detected: [sysmon([29])],
  sysmon_error: [sysmon([255])],
  ps_script: POWERSHELL.map((channel) => ({ channel, ids: [4104] })),
  ps_module: POWERSHELL.map((channel) => ({ channel, ids: [4103] })),
  ps_classic_start: [{ channel: 'Windows PowerShell', ids: [400] }],
  ps_classic_provider_start: [{ channel: 'Windows PowerShell', ids: [600] }],
  ps_classic_script: [{ channel: 'Windows PowerShell', ids: [800] }],
};

/** Security 4688 names process fields differently from Sysmon 1 (pySigma `windows-audit`); Sigma rules use Sysmon's. */
export const SECURITY_4688_FIELDS: Readonly<Record<string, string>> = {
  Image: 'NewProcessName',
  ParentImage: 'ParentProcessName',
  ProcessId: 'NewProcessId',
  ParentProcessId: 'ProcessId',
  LogonId: 'SubjectLogonId',
  User: 'SubjectUserName',
};

/** Lookup from (channel lower-cased, event id) to the categories of such an event. */
const BY_CHANNEL_ID: ReadonlyMap<string, ReadonlyArray<{ category: string; eventTypes?: readonly string[] }>> = (() => {
  const map = new Map<string, Array<{ category: string; eventTypes?: readonly string[] }>>();
  for (const [category, sources] of Object.entries(WINDOWS_CATEGORIES)) {
    for (const s of sources) {
      for (const id of s.ids) {
        const key = `${s.channel.toLowerCase()}#${id}`;
        const list = map.get(key) ?? [];
        list.push({ category, ...(s.eventTypes ? { eventTypes: s.eventTypes } : {}) });
        map.set(key, list);
      }
    }
  }
  return map;
})();

/** The Windows categories of one event, from its channel, event id and (Sysmon registry) EventType. */
export function windowsCategories(channel: string, eventId: number, eventType: unknown): string[] {
  const entries = BY_CHANNEL_ID.get(`${channel.toLowerCase()}#${eventId}`) ?? [];
  return entries
    .filter((e) => !e.eventTypes || (typeof eventType === 'string' && e.eventTypes.includes(eventType)))
    .map((e) => e.category);
}
