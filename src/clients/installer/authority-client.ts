/** An error answer of the setup authority. */
export class AuthorityError extends Error {
  override readonly name = 'AuthorityError';
  constructor(
    readonly status: number,
    message: string,
    readonly issues?: readonly string[],
  ) {
    super(message);
  }
}

/** A thin JSON client of the setup protocol (docs/setup-protocol.md); secrets go in bodies and headers only. */
export interface AuthorityClient {
  post<T>(path: string, body: unknown, bearer?: string): Promise<T>;
  get<T>(path: string, bearer?: string): Promise<T>;
}

/** Creates the client for `setupUrl`. */
export function authorityClient(setupUrl: string): AuthorityClient {
  const base = setupUrl.replace(/\/+$/, '');
  async function call<T>(method: string, path: string, body: unknown, bearer?: string): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (bearer) headers.authorization = `Bearer ${bearer}`;
    const res = await fetch(`${base}${path}`, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(30_000),
    });
    const json = (await res.json().catch(() => ({}))) as { error?: string; issues?: string[] };
    if (!res.ok)
      throw new AuthorityError(res.status, `${method} ${path}: ${res.status} ${json.error ?? 'error'}`, json.issues);
    return json as T;
  }
  return {
    post: (path, body, bearer) => call('POST', path, body, bearer),
    get: (path, bearer) => call('GET', path, undefined, bearer),
  };
}
