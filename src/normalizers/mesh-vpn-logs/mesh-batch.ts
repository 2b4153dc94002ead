import type { PlaceOf } from '../record-id.js';

/** The normalizer name, which is also every event's `source.adapter`. */
export const MESH_ADAPTER = 'mesh-vpn-logs';

/** What every event from one raw mesh-vpn-logs record shares. */
export interface MeshBatch {
  /** Ids and raw references of the events derived from the raw record. */
  readonly placeOf: PlaceOf;
  /** `meshnet:<name>` from the `meshnet` parameter, undefined when it was not given. */
  readonly meshnetKey: string | undefined;
  /** When Vigil received the batch. */
  readonly ingestedAt: string;
}
