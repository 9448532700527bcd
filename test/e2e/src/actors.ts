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
  /** The admin made by `deskctl bootstrap`, with the bootstrap key (its plan is whatever bootstrap gives). */
  bootstrapKey: string;
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
export function uniqueEmail(stack: Stack, label: string): string {
  serial += 1;
  return `${label}.${serial}.${stack.run}@example.com`;
}

/** The user object deskctl prints with --json (`{id, ...}` or `{user: {...}}`). */
export function userFrom(json: Json): { id: string; email: string } {
  return json?.user?.id ? json.user : json;
}

/** `deskctl api-keys create`; returns `{id, key}`. */
export async function createKey(
  stack: Stack,
  owner: string,
  scopes: string[],
  extra: string[] = SUITE_PLAN,
  name = 'e2e',
): Promise<{ id: string; key: string }> {
  const json = await stack.deskctlJson([
    'api-keys',
    'create',
    '--owner',
    owner,
    '--name',
    name,
    '--scopes',
    scopes.join(','),
    ...extra,
  ]);
  const key = json?.key ?? json?.apiKey?.key;
  const id = json?.id ?? json?.apiKey?.id;
  if (typeof key !== 'string')
    throw new Error(`deskctl api-keys create --json gave no key: ${JSON.stringify(json)}`);
  return { id, key };
}

/** `deskctl users create` + an API key for the new user. */
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
  if (options.password) args.push('--password-stdin');
  const user = userFrom(
    await stack.deskctlJson(args, { stdin: options.password ? `${options.password}\n` : undefined }),
  );
  const { id: keyId, key } = await createKey(
    stack,
    email,
    options.scopes ?? ROLE_KEY_SCOPES[role],
    options.keyArgs,
  );
  return { id: user.id, email, name, role, key, keyId, api: stack.api(key) };
}

/** Bootstrap admin (deskctl bootstrap) plus an agent and a viewer, each with an API key. */
export async function cast(stack: Stack): Promise<Cast> {
  const email = uniqueEmail(stack, 'admin');
  const boot = await stack.deskctlJson(['bootstrap', '--email', email, '--name', 'E2E Admin']);
  const bootstrapKey = boot?.key ?? boot?.apiKey?.key;
  if (typeof bootstrapKey !== 'string')
    throw new Error(`deskctl bootstrap --json gave no key: ${JSON.stringify(boot)}`);
  const { id: keyId, key } = await createKey(stack, email, ['admin']);
  const me = await stack.api(key).get('/v1/me');
  const adminId = me.json?.data?.id ?? boot?.user?.id ?? boot?.userId;
  const admin: Actor = {
    id: adminId,
    email,
    name: 'E2E Admin',
    role: 'admin',
    key,
    keyId,
    api: stack.api(key),
  };
  const [agent, viewer] = await Promise.all([createActor(stack, 'agent'), createActor(stack, 'viewer')]);
  return { bootstrapKey, admin, agent, viewer };
}
