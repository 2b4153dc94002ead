import { INDICATOR_TYPES } from '../../events/intel-events.js';

/**
 * Threat intelligence, the pure part (issue 60): indicators as Vigil keeps them, whatever feed they came from
 * (a STIX 2.1 bundle or TAXII collection, a MISP feed, a plain list), and what matching one on an event explains.
 * Readers (stix-*.ts, misp.ts, lists.ts) turn a feed's documents into indicators; the index (indicator-index.ts)
 * finds the ones an event's fields hold. Nothing here does I/O.
 */

/** The kinds of value an indicator can name, each matched against the event fields of its kind (event-fields.ts). */
export { INDICATOR_TYPES };

/** One kind of indicator value. */
export type IndicatorType = (typeof INDICATOR_TYPES)[number];

/**
 * One observable value, normalized (normalize.ts): lower-case domains without a trailing dot, canonical IPv4/IPv6
 * text, CIDR with its host bits cleared (`10.1.0.0/16`, `2001:db8::/32`), URLs normalized (scheme and host
 * lower-case, default port dropped, path kept), lower-case hex hashes, lower-case e-mail addresses.
 */
export interface IndicatorTerm {
  readonly type: IndicatorType;
  readonly value: string;
}

/** A STIX object an indicator relates to (through a `relationship` or a MISP galaxy): what an alert names. */
export interface RelatedObject {
  /** `malware`, `threat-actor`, `intrusion-set`, `campaign`, `attack-pattern`, `tool`, `infrastructure`, ... */
  readonly type: string;
  readonly name: string;
  readonly id?: string;
}

/**
 * One indicator: the observations it matches, as alternatives (`anyOf`), each a conjunction of terms that must all
 * hold on one event (`[file:hashes.md5 = 'a' AND file:name = 'b']` is one alternative of two terms; `OR` and `IN`
 * make several alternatives of one term each).
 */
export interface Indicator {
  /** Unique within its feed: the STIX indicator id, the MISP attribute uuid, or `list:<type>:<value>`. */
  readonly id: string;
  readonly anyOf: ReadonlyArray<ReadonlyArray<IndicatorTerm>>;
  /** ISO 8601; absent: valid since ever. */
  readonly validFrom?: string;
  /** ISO 8601; absent: valid for ever. An event at or after it does not match. */
  readonly validUntil?: string;
  readonly revoked?: boolean;
  /** 0..100 (STIX `confidence`; a MISP feed's or list's declared confidence). */
  readonly confidence?: number;
  /** The indicator's name or description, for people. */
  readonly name?: string;
  readonly labels?: readonly string[];
  readonly related?: readonly RelatedObject[];
  /** The STIX pattern or MISP attribute as written, for the alert's explanation. */
  readonly source: string;
}

/** An indicator a reader could not turn into terms, with why: listed, never dropped silently. */
export interface UnsupportedIndicator {
  readonly id: string;
  /** The pattern or attribute as written (cut to 512 characters). */
  readonly source: string;
  readonly reason: string;
}

/** What a reader made of one feed document. */
export interface IndicatorSet {
  readonly indicators: readonly Indicator[];
  readonly unsupported: readonly UnsupportedIndicator[];
}

/** Why an event matched an indicator: which term, on which field of the event, with which value. */
export interface IndicatorMatch {
  readonly indicator: Indicator;
  /** The alternative that held (its terms). */
  readonly terms: ReadonlyArray<IndicatorTerm>;
  /** The event field each term matched, and the event's value there. */
  readonly fields: ReadonlyArray<{ readonly field: string; readonly value: string; readonly term: IndicatorTerm }>;
}
