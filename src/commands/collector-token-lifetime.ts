/** Default and longest lifetime of an enrollment token: short-lived by design. */
export const TOKEN_LIFETIME = { defaultMs: 60 * 60 * 1000, maxMs: 7 * 24 * 60 * 60 * 1000, minMs: 60 * 1000 } as const;

const UNIT_MS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses `90s`, `15m`, `1h`, `2d` to milliseconds within the allowed lifetime, or undefined. */
export function parseLifetime(text: string): number | undefined {
  const m = /^(\d{1,6})([smhd])$/.exec(text);
  if (!m) return undefined;
  const ms = Number(m[1]) * UNIT_MS[m[2]!]!;
  return ms >= TOKEN_LIFETIME.minMs && ms <= TOKEN_LIFETIME.maxMs ? ms : undefined;
}
