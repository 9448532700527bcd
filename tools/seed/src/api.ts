/**
 * The seeder's client of the public API (through the gateway): requests, comments, attachments
 * and status moves go over HTTP like any client's. Every call has a timeout; only answers that
 * prove nothing was written (429 and 503) are retried, a bounded number of times.
 */

export const HTTP_TIMEOUT_MS = 15_000;
const MAX_ATTEMPTS = 4;

export class SeedHttpError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class SeedApi {
  /** Calls made (for the summary). */
  calls = 0;

  constructor(readonly origin: string) {}

  /** The gateway answers `/readyz` 200 when it and its dependencies are up. */
  async ready(): Promise<void> {
    let res: Response;
    try {
      res = await fetch(`${this.origin}/readyz`, { signal: AbortSignal.timeout(5000) });
    } catch (err) {
      throw new SeedHttpError(
        `the gateway at ${this.origin} cannot be reached (${(err as Error).cause ?? (err as Error).message}); start the stack (npm start) or pass --url`,
        0,
      );
    }
    if (res.status !== 200)
      throw new SeedHttpError(`the gateway at ${this.origin} is not ready (HTTP ${res.status})`, res.status);
  }

  async call<T = Record<string, unknown>>(
    key: string,
    method: string,
    path: string,
    body?: Record<string, unknown> | FormData,
  ): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      this.calls += 1;
      const headers: Record<string, string> = { authorization: `Bearer ${key}`, accept: 'application/json' };
      let payload: string | FormData | undefined;
      if (body instanceof FormData) payload = body;
      else if (body !== undefined) {
        headers['content-type'] = 'application/json';
        payload = JSON.stringify(body);
      }
      let res: Response;
      try {
        res = await fetch(`${this.origin}${path}`, {
          method,
          headers,
          body: payload,
          signal: AbortSignal.timeout(HTTP_TIMEOUT_MS),
        });
      } catch (err) {
        throw new SeedHttpError(`${method} ${path}: ${(err as Error).message}`, 0);
      }
      const text = await res.text();
      let parsed: { success?: boolean; data?: T; error?: { code?: string; message?: string } } | undefined;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      if (res.ok && parsed?.success) return parsed.data as T;
      if ((res.status === 429 || res.status === 503) && attempt < MAX_ATTEMPTS) {
        const retryAfter = Number(res.headers.get('retry-after'));
        await sleep(
          Math.min(Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : 250 * attempt, 5000),
        );
        continue;
      }
      const detail = parsed?.error ? `${parsed.error.code}: ${parsed.error.message}` : text.slice(0, 200);
      const hint =
        res.status === 401
          ? ' (the gateway does not know the seeding key: does it serve this identity database? check --url / SD_URL and MONGO_URL/MONGO_DB)'
          : '';
      throw new SeedHttpError(`${method} ${path}: HTTP ${res.status} ${detail}${hint}`, res.status);
    }
  }

  upload(key: string, path: string, filename: string, content: Buffer) {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(content)]), filename);
    return this.call(key, 'POST', path, form);
  }
}
