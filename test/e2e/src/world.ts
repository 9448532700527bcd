import type { Asserts } from './expect.js';
import { expectOk } from './expect.js';
import type { Api, Json } from './http.js';
import type { Ledger } from './ledger.js';

let n = 0;
const tag = () => `${Date.now().toString(36)}${(n++).toString(36)}`;

/** POST /v1/requests; returns the created request's `data` (fails the test when not 201). */
export async function createRequest(
  t: Asserts,
  api: Api,
  body: Record<string, unknown> = {},
  ledger?: Ledger,
): Promise<Json> {
  const res = await api.post('/v1/requests', {
    title: `Printer on fire ${tag()}`,
    description: 'The printer on floor 3 is on fire again.',
    priority: 'medium',
    ...body,
  });
  const data = expectOk(t, res, 201, 'POST /v1/requests');
  if (!data?.id) throw new Error(`POST /v1/requests failed: ${res.status} ${res.text.slice(0, 300)}`);
  ledger?.record(data.id, 'request.created');
  // Created with an assignee or a group: the assignment may be its own event (the spec leaves it open).
  if (body.assignedTo || body.assignedGroup) ledger?.allow(data.id, 'request.assigned');
  return data;
}

/** POST /v1/groups (the README's addition to the spec); returns the group. */
export async function createGroup(
  t: Asserts,
  api: Api,
  name = `Group ${tag()}`,
  description = 'e2e',
): Promise<Json> {
  const res = await api.post('/v1/groups', { name, description });
  const data = expectOk(t, res, 201, 'POST /v1/groups');
  if (!data?.id) throw new Error(`POST /v1/groups failed: ${res.status} ${res.text.slice(0, 300)}`);
  return data;
}

/** POST /v1/users; returns the created user. */
export async function createUser(
  t: Asserts,
  api: Api,
  body: Record<string, unknown> = {},
  ledger?: Ledger,
): Promise<Json> {
  const res = await api.post('/v1/users', {
    email: `user.${tag()}@example.com`,
    name: `User ${tag()}`,
    role: 'viewer',
    ...body,
  });
  const data = expectOk(t, res, 201, 'POST /v1/users');
  if (!data?.id) throw new Error(`POST /v1/users failed: ${res.status} ${res.text.slice(0, 300)}`);
  ledger?.record(data.id, 'user.created');
  return data;
}

/** Substitutes `:name` path parameters. */
export function fill(path: string, params: Record<string, string>): string {
  return path.replace(/:(\w+)/g, (_m, k: string) => {
    const v = params[k];
    if (v === undefined) throw new Error(`no value for :${k} in ${path}`);
    return encodeURIComponent(v);
  });
}
