// Swagger UI plugins for /docs. They run in the browser: @fastify/swagger-ui writes each function's
// source into the page's initializer, so each refers to nothing outside itself but Swagger UI's
// own global and the arguments the plugin API passes (swagger-ui docs: "Plugin API").

/** A request as Swagger UI keeps it (an Immutable.js Map). */
interface KeptRequest {
  get(key: string): unknown;
  setIn(path: string[], value: unknown): KeptRequest;
}
type Selector = (...args: unknown[]) => KeptRequest | null;

declare const SwaggerUIBundle: { plugins: { DownloadUrl: (system: unknown) => unknown } };

/**
 * Swagger UI's own plugin that loads the document from `url`/`urls` (the default the initializer
 * sets, which a `plugins` option replaces).
 */
export function downloadUrlPlugin(system: unknown): unknown {
  return SwaggerUIBundle.plugins.DownloadUrl(system);
}

/**
 * What Swagger UI shows of a call it made (the curl snippet and the request URL) is read through
 * the `requestFor` and `mutatedRequestFor` selectors; wrapped here, the credential in the
 * Authorization header shows masked (an API key keeps its public id: `sd_key_<id>_********`). The
 * call itself is built from the authorizations, not from these, and is sent with the credential.
 */
export function maskCredentialsPlugin(): unknown {
  const mask = (request: KeptRequest | null): KeptRequest | null => {
    const headers = request?.get('headers') as { keySeq(): { toArray(): string[] } } | undefined;
    if (!request || !headers) return request;
    const name = headers
      .keySeq()
      .toArray()
      .find((h) => h.toLowerCase() === 'authorization');
    if (!name) return request;
    const value = String((headers as unknown as KeptRequest).get(name));
    const masked = value.replace(/^(\S+\s+)(sd_[a-z]+_[0-9a-z]+_)?\S+$/i, '$1$2********');
    return request.setIn(['headers', name], masked === value ? '********' : masked);
  };
  const wrap =
    (selector: Selector) =>
    (_state: unknown, ...args: unknown[]) =>
      mask(selector(...args));
  return {
    statePlugins: { spec: { wrapSelectors: { requestFor: wrap, mutatedRequestFor: wrap } } },
  };
}

/**
 * Under the title Swagger UI links the address it read the document from (`/docs/json`, this
 * page's copy): the link names the document itself instead, `/openapi.json`.
 */
export function documentLinkPlugin(): unknown {
  type Props = Record<string, unknown>;
  type System = { React: { createElement(type: unknown, props: Props): unknown } };
  return {
    wrapComponents: {
      InfoUrl: (Original: unknown, system: System) => (props: Props) =>
        system.React.createElement(Original, { ...props, url: '/openapi.json' }),
    },
  };
}
