import { fileKey, hostKey, ipKey } from './keys.js';
import type { MaybeKey } from './keys.js';
import { SEVERITY_INFO, serviceOf } from './mapping.js';
import type { ZeekMapper } from './mapping.js';
import { compact, enumName, ipText, snakeWord, text } from './record.js';

/** The server of a UNC path (`\\admin-pc\c$` -> `host:admin-pc`, an address -> `ip:`). */
export function uncHostKey(path: string | undefined): MaybeKey {
  const server = path === undefined ? undefined : /^\\\\([^\\]+)/.exec(path)?.[1];
  if (server === undefined) return undefined;
  return ipText(server) !== undefined ? ipKey(server) : hostKey(server);
}

/** The activity of an SMB file action: `SMB::FILE_OPEN` -> `open`, `SMB::PRINT_WRITE` -> `print_write`. */
export function smbActivity(action: string | undefined): string {
  if (action === undefined) return 'access';
  return snakeWord(enumName(action)).replace(/^file_/, '') || 'access';
}

/** smb_files.log: one event per SMB file action (class `smb_file_access`, activity from `action`). */
export const mapSmbFiles: ZeekMapper = (record, conn) => {
  const fuid = text(record, 'fuid');
  return {
    category: 'network',
    class: 'smb_file_access',
    activity: smbActivity(text(record, 'action')),
    outcome: 'unknown',
    severity: SEVERITY_INFO,
    service: serviceOf('smb', conn),
    correlation: compact({ fuid }),
    keys: [fileKey(fuid), uncHostKey(text(record, 'path'))],
  };
};

/** smb_mapping.log: one event per share tree connect (class `smb_share_mapping`, activity `map_share`). */
export const mapSmbMapping: ZeekMapper = (record, conn) => ({
  category: 'network',
  class: 'smb_share_mapping',
  activity: 'map_share',
  outcome: 'unknown',
  severity: SEVERITY_INFO,
  service: serviceOf('smb', conn),
  keys: [uncHostKey(text(record, 'path'))],
});

/** dce_rpc.log: one event per DCE/RPC request/response (class `dce_rpc_call`, activity `call`). */
export const mapDceRpc: ZeekMapper = (_record, conn) => ({
  category: 'network',
  class: 'dce_rpc_call',
  activity: 'call',
  outcome: 'unknown',
  severity: SEVERITY_INFO,
  service: serviceOf('dce_rpc', conn),
});
