/** A token bucket of `perSecond` tokens, holding at most one second's worth. */
export interface TokenBucket {
  /** Takes one token; returns 0 when one was there, else the milliseconds until the bucket is back to zero. */
  take(nowMs: number): number;
}

/** A full bucket refilled at `perSecond`. */
export function tokenBucket(perSecond: number, nowMs: number): TokenBucket {
  let tokens = perSecond;
  let last = nowMs;
  return {
    take(at) {
      tokens = Math.min(perSecond, tokens + ((at - last) / 1000) * perSecond);
      last = at;
      tokens -= 1;
      return tokens >= 0 ? 0 : Math.ceil((-tokens / perSecond) * 1000);
    },
  };
}
