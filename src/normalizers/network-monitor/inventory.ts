import { certKey, hostKey, portKey, serviceKey } from './keys.js';
import { SEVERITY_INFO, endpointOf } from './mapping.js';
import type { ZeekMapper, ZeekMapping } from './mapping.js';
import { compact, ipText, portNumber, text, texts } from './record.js';
import type { ZeekRecord } from './record.js';

/** The shared shape of an inventory fact: a host (and port) Zeek learned something about. */
function inventory(record: ZeekRecord, portField: string, cls: string): ZeekMapping {
  return {
    category: 'discovery',
    class: cls,
    activity: 'discover',
    outcome: 'unknown',
    severity: SEVERITY_INFO,
    destinationEndpoint: endpointOf({ ip: ipText(record['host']), port: portNumber(record[portField]) }),
  };
}

/** software.log: software seen on a host (class `software_inventory`). */
export const mapSoftware: ZeekMapper = (record) => inventory(record, 'host_p', 'software_inventory');

/** known_hosts.log: a host seen completing a connection (class `host_inventory`, key `host:<addr>`). */
export const mapKnownHosts: ZeekMapper = (record) => ({
  ...inventory(record, 'port_num', 'host_inventory'),
  keys: [hostKey(ipText(record['host']))],
});

/** The service names of a known_services record (a set in JSON; a lone string tolerated). */
function serviceNames(record: ZeekRecord): string[] {
  const single = text(record, 'service');
  return (single === undefined ? texts(record, 'service') : [single]).map((name) => name.toLowerCase());
}

/** known_services.log: a service seen on a host port (class `service_inventory`). */
export const mapKnownServices: ZeekMapper = (record) => {
  const names = serviceNames(record);
  const proto = text(record, 'port_proto')?.toLowerCase();
  const port = portNumber(record['port_num']);
  return {
    ...inventory(record, 'port_num', 'service_inventory'),
    service: compact({ name: names.length > 0 ? names.join(',') : undefined, protocol: proto, port }),
    keys: [...names.map(serviceKey), portKey(proto, port)],
  };
};

/** known_certs.log: a certificate a local server offered (class `certificate_inventory`). */
export const mapKnownCerts: ZeekMapper = (record) => ({
  ...inventory(record, 'port_num', 'certificate_inventory'),
  keys: [certKey(text(record, 'serial'))],
});
