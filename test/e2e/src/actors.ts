import type { Role, Scope } from '@support-desk/contracts';
import type { Api, Json } from './http.js';
import type { Stack } from './stack.js';

export interface Actor {
  id: string;
  email: string;
  name: string;
  role: Role;
  key: string;
  keyId: string;
  api: Api;
}

export interface Cast {
  admin: Actor;
  agent: Actor;
  viewer: Actor;
}

/**
 * The suite's own limits: the functional tests make far more than 60 calls a minute, so their keys
 * are Enterprise keys with high limits; the rate-limit test creates Standard keys of its own.
 */
export const SUITE_PLAN = ['--plan', 'enterprise', '--rate-limit', '100000', '--events-rate-limit', '100000'];

const ROLE_KEY_SCOPES: Record<Role, Scope[]> = {
  admin: ['admin'],
  agent: ['requests:read', 'requests:write', 'users:read'],
  viewer: ['requests:read', 'users:read'],
};

let serial = 0;
/** An address no other file's data uses, even on a shared stack (`stack.tag` is this file's own). */
function uniqueEmail(stack: Stack, label: string): string {
  serial += 1;
  return `${label}.${serial}.${stack.tag}@example.com`;
}

/** The user object deskctl prints with --json (`{id, ...}` or `{user: {...}}`). */
function userFrom(json: Json): { id: string; email: string } {
  return json?.user?.id ? json.user : json;
}

/** `api-keys create` arguments for `owner`, e.g. in a batch. */
const keyCommand = (owner: string, scopes: string[], extra: string[] = SUITE_PLAN, name = 'e2e') => [
  'api-keys',
  'create',
  '--owner',
  owner,
  '--name',
  name,
  '--scopes',
  scopes.join(','),
  ...extra,
];

/** The `{id, key}` of what `deskctl api-keys create --json` printed. */
function keyFrom(json: Json): { id: string; key: string } {
  const key = json?.key ?? json?.apiKey?.key;
  if (typeof key !== 'string')
    throw new Error(`deskctl api-keys create --json gave no key: ${JSON.stringify(json)}`);
  return { id: json?.id ?? json?.apiKey?.id, key };
}

/** `deskctl api-keys create`; returns `{id, key}`. */
export async function createKey(
  stack: Stack,
  owner: string,
  scopes: string[],
  extra: string[] = SUITE_PLAN,
  name = 'e2e',
): Promise<{ id: string; key: string }> {
  return keyFrom(await stack.deskctlJson(keyCommand(owner, scopes, extra, name)));
}

/** `deskctl users create` + an API key for the new user (one deskctl process unless a password is set). */
export async function createActor(
  stack: Stack,
  role: Role,
  label: string = role,
  options: { scopes?: Scope[]; keyArgs?: string[]; vip?: boolean; password?: string } = {},
): Promise<Actor> {
  const email = uniqueEmail(stack, label);
  const name = `E2E ${label}`;
  const args = ['users', 'create', '--email', email, '--name', name, '--role', role];
  if (options.vip) args.push('--vip');
  const keyArgs = keyCommand(email, options.scopes ?? ROLE_KEY_SCOPES[role], options.keyArgs);
  let created: Json;
  let keyJson: Json;
  if (options.password) {
    // A password comes on standard input, which a batch uses for its commands.
    created = await stack.deskctlJson([...args, '--password-stdin'], { stdin: `${options.password}\n` });
    keyJson = await stack.deskctlJson(keyArgs);
  } else {
    [created, keyJson] = await stack.deskctlBatch([args, keyArgs]);
  }
  const { id: keyId, key } = keyFrom(keyJson);
  return { id: userFrom(created).id, email, name, role, key, keyId, api: stack.api(key) };
}

/**
 * An admin, an agent and a viewer of this file's own, each with an API key: one `deskctl batch`
 * process (six commands) instead of six deskctl processes. The admin is an ordinary admin user, so
 * any number of files can cast on one shared stack (`deskctl bootstrap` makes only the first admin;
 * the README walkthrough and the seeder's test prove it).
 */
export async function cast(stack: Stack): Promise<Cast> {
  const people = (['admin', 'agent', 'viewer'] as const).map((role) => ({
    role,
    email: uniqueEmail(stack, role),
    name: role === 'admin' ? 'E2E Admin' : `E2E ${role}`,
  }));
  const results = await stack.deskctlBatch(
    people.flatMap(({ role, email, name }) => [
      ['users', 'create', '--email', email, '--name', name, '--role', role],
      keyCommand(email, ROLE_KEY_SCOPES[role]),
    ]),
  );
  const [admin, agent, viewer] = people.map(({ role, email, name }, i): Actor => {
    const { id: keyId, key } = keyFrom(results[2 * i + 1]);
    return { id: userFrom(results[2 * i]).id, email, name, role, key, keyId, api: stack.api(key) };
  });
  return { admin: admin!, agent: agent!, viewer: viewer! };
}
