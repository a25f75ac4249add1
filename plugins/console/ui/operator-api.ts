/**
 * Calls to the operator API (/admin, P9) with the operator key the user typed. The key lives in
 * sessionStorage: it is gone when the tab closes, and never leaves this origin.
 */
const KEY_ITEM = 'opco-proxy.operator-key';

export const operatorKey = {
  get: (): string | null => sessionStorage.getItem(KEY_ITEM),
  set: (key: string): void => sessionStorage.setItem(KEY_ITEM, key),
  forget: (): void => sessionStorage.removeItem(KEY_ITEM),
};

/** The service refused the key (401): the page asks for it again. */
export class KeyRefused extends Error {}

/** Any other error, with the description of the service's error body. */
export class OperatorApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** `body`, when given, is sent as JSON (the bulk retry's filter). */
export async function callAdmin<T>(path: string, method: 'GET' | 'POST' = 'GET', body?: unknown): Promise<T> {
  const key = operatorKey.get();
  if (!key) throw new KeyRefused('no operator key');
  const headers: Record<string, string> = { authorization: `Bearer ${key}`, accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer: unknown = await response.json().catch(() => undefined);
  if (response.status === 401) throw new KeyRefused(errorDescription(answer) ?? 'the operator key was refused');
  if (!response.ok)
    throw new OperatorApiError(
      response.status,
      errorDescription(answer) ?? `${method} ${path} answered ${response.status}`,
    );
  return answer as T;
}

/** The `description` of the service's error body, when the body is one. */
function errorDescription(body: unknown): string | undefined {
  const description = (body as { description?: unknown } | undefined)?.description;
  return typeof description === 'string' ? description : undefined;
}

/** `/admin/jobs` with the query's non-empty values. */
export function withQuery(path: string, query: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value) params.set(name, value);
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}
