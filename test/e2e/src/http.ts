import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';

/** A parsed JSON body: the tests check it field by field, so it is not typed further. */
export type Json = any;

/** One HTTP exchange as a client sees it: status, headers, raw bytes, and the body parsed as JSON when it is JSON. */
export interface HttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  text: string;
  json: Json;
  /** `true` when the Content-Type says JSON and the body parsed. */
  isJson: boolean;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string | undefined>;
  /** Raw body (sent as is); see `json` for a JSON body. */
  body?: Buffer | string;
  json?: unknown;
  /** Extra CA for HTTPS (the suite's self-signed certificate). */
  ca?: Buffer | string;
  timeoutMs?: number;
}

/**
 * A plain node:http(s) client, so the suite controls every header byte (fetch adds its own Accept
 * and Content-Type) and can trust a self-signed certificate for one call without touching the process.
 */
export function request(url: string, options: RequestOptions = {}): Promise<HttpResponse> {
  const target = new URL(url);
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(options.headers ?? {}))
    if (v !== undefined) headers[k.toLowerCase()] = v;
  let body: Buffer | undefined;
  if (options.json !== undefined) {
    body = Buffer.from(JSON.stringify(options.json));
    headers['content-type'] ??= 'application/json';
  } else if (options.body !== undefined) {
    body = Buffer.isBuffer(options.body) ? options.body : Buffer.from(options.body);
  }
  if (body) headers['content-length'] = String(body.length);
  const lib = target.protocol === 'https:' ? https : http;
  const timeoutMs = options.timeoutMs ?? 30_000;
  return new Promise((resolve, reject) => {
    const req = lib.request(
      target,
      { method: options.method ?? 'GET', headers, ca: options.ca, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const buf = Buffer.concat(chunks);
          const text = buf.toString('utf8');
          const type = String(res.headers['content-type'] ?? '');
          let json: unknown;
          let isJson = false;
          if (/json/i.test(type)) {
            try {
              json = JSON.parse(text);
              isJson = true;
            } catch {
              json = undefined;
            }
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: buf, text, json, isJson });
        });
      },
    );
    req.setTimeout(timeoutMs, () =>
      req.destroy(new Error(`${options.method ?? 'GET'} ${url}: no answer in ${timeoutMs} ms`)),
    );
    req.on('error', reject);
    if (body) req.write(body);
    req.end();
  });
}

/** A multipart/form-data body with one file part (the upload format of the spec). */
function multipart(
  field: string,
  filename: string,
  content: Buffer,
  contentType = 'application/octet-stream',
): { body: Buffer; contentType: string } {
  const boundary = `----sd-e2e-${Math.random().toString(16).slice(2)}${Date.now().toString(16)}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\n` +
      `Content-Type: ${contentType}\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return {
    body: Buffer.concat([head, content, tail]),
    contentType: `multipart/form-data; boundary=${boundary}`,
  };
}

/**
 * An API client bound to one credential. Sends the spec's headers (Authorization, Accept,
 * Content-Type for JSON bodies); `path` is relative to the gateway root (e.g. `/v1/requests`).
 */
export class Api {
  constructor(
    readonly root: string,
    readonly token: string | null,
    readonly ca?: Buffer | string,
  ) {}

  as(token: string | null): Api {
    return new Api(this.root, token, this.ca);
  }

  send(method: string, path: string, options: RequestOptions = {}): Promise<HttpResponse> {
    const headers: Record<string, string | undefined> = { accept: 'application/json' };
    if (this.token) headers.authorization = `Bearer ${this.token}`;
    Object.assign(headers, options.headers);
    return request(this.root + path, { ...options, method, headers, ca: options.ca ?? this.ca });
  }

  get(path: string, options?: RequestOptions) {
    return this.send('GET', path, options);
  }
  post(path: string, json?: unknown, options: RequestOptions = {}) {
    return this.send('POST', path, json === undefined ? options : { ...options, json });
  }
  patch(path: string, json?: unknown, options: RequestOptions = {}) {
    return this.send('PATCH', path, json === undefined ? options : { ...options, json });
  }
  delete(path: string, options?: RequestOptions) {
    return this.send('DELETE', path, options);
  }

  upload(
    path: string,
    filename: string,
    content: Buffer,
    contentType?: string,
    options: RequestOptions = {},
  ) {
    const form = multipart('file', filename, content, contentType);
    return this.send('POST', path, {
      ...options,
      body: form.body,
      headers: { ...options.headers, 'content-type': form.contentType },
    });
  }
}

/** Query string from an object (undefined values left out). */
export function qs(params: Record<string, string | number | boolean | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}
