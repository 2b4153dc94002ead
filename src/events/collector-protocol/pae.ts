/** The DSSE payload type of a Vigil collector payload. */
export const PAYLOAD_TYPE = 'application/vnd.vigil.collector-payload+json; version=1';

/**
 * The parts of the DSSE v1 pre-authentication encoding, in order: `"DSSEv1" SP len(type) SP type
 * SP len(body) SP` and the body, lengths as ASCII decimal byte counts. Hashed part by part, the
 * signed bytes need not be assembled.
 */
export function paeParts(type: string, body: Uint8Array): [Uint8Array, Uint8Array] {
  return [Buffer.from(`DSSEv1 ${Buffer.byteLength(type, 'utf8')} ${type} ${body.byteLength} `, 'utf8'), body];
}

/** DSSE v1 pre-authentication encoding of a body under a payload type. */
export function pae(type: string, body: Uint8Array): Uint8Array {
  return Buffer.concat(paeParts(type, body));
}
