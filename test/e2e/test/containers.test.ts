// The image and the stack in containers, as operators run them: `npm run containers` starts Redis,
// NATS, PostgreSQL + FerretDB and the five services from the application image (`npm run image`)
// in one pod with docker-compose.yml's environment; this file proves each service is ready from the
// image, read-only as 10001 with only /tmp writable, that `deskctl` is on the image's PATH, that the
// README walkthrough's first calls pass through the containerized gateway and reach audit, and that
// SIGTERM stops every service within its grace (tini hands it to node).
// It skips only where podman cannot run containers at all (said in its output); never in CI.
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import t from 'tap';
import { request, type Json } from '../src/http.js';
import { freePort, ROOT } from '../src/stack.js';

const SERVICES = ['identity', 'requests', 'audit', 'webhooks', 'gateway'] as const;
const PORTS = { gateway: 8080, requests: 8081, identity: 8082, audit: 8083, webhooks: 8084 };
const UP_TIMEOUT_MS = 540_000;

const podman = (args: string[]) => spawnSync('podman', args, { encoding: 'utf8', timeout: 120_000 });

function podmanMissing(): string | null {
  const info = podman(['--runtime', 'runc', 'info', '--format', '{{.Host.OCIRuntime.Name}}']);
  if (info.error) return `podman cannot run here (${info.error.message})`;
  if (info.status !== 0) return `podman cannot run here: ${info.stderr.trim()}`;
  return null;
}

const missing = podmanMissing();
if (missing && !process.env.CI) {
  t.comment(`SKIP: ${missing}; install podman and runc (apt-get install podman runc) to run this file`);
  t.pass('skipped: podman cannot run containers on this machine');
  process.exit(0);
}

const pod = `sd-ctest-${process.pid}`;
// A published port of the caller's choosing (shared machines give each run its own range).
const port = Number(process.env.SD_CONTAINERS_GATEWAY_PORT ?? (await freePort()));
const base = `http://127.0.0.1:${port}/v1`;
const script = path.join(ROOT, 'scripts', 'containers.mjs');
const containers = (args: string[]) =>
  new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
    const child = spawn(process.execPath, [script, ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const timer = setTimeout(() => child.kill('SIGTERM'), UP_TIMEOUT_MS);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });

t.teardown(async () => {
  await containers(['down', '--name', pod, '--volumes']);
});

const up = await containers(['up', '--name', pod, '--publish', `127.0.0.1:${port}`]);
if (up.code !== 0) console.error(up.err.slice(-6000));
t.equal(up.code, 0, 'npm run containers starts the whole stack');
const adminKey = /admin API key \(shown once\): (\S+)/.exec(up.out)?.[1] ?? '';
const container = (s: string) => `${pod}-${s}`;
const exec = (s: string, args: string[]) => podman(['exec', container(s), ...args]);

t.test('every service runs from the image, ready, read-only, as 10001', async (t) => {
  for (const s of SERVICES) {
    const inspect = podman([
      'inspect',
      '--format',
      '{{.Config.User}} {{.HostConfig.ReadonlyRootfs}} {{.State.Status}}',
      container(s),
    ]);
    t.equal(inspect.stdout.trim(), '10001:10001 true running', `${s}: user 10001, read-only root, running`);
    const ready = exec(s, [
      'node',
      '-e',
      `fetch('http://127.0.0.1:${PORTS[s]}/readyz').then(r=>console.log(r.status))`,
    ]);
    t.equal(ready.stdout.trim(), '200', `${s}: /readyz answers 200 in its container`);
  }
  const write = (file: string) =>
    exec('identity', ['node', '-e', `require('fs').writeFileSync('${file}','x');console.log('written')`]);
  const root = write('/app/written-by-test');
  t.match(root.stderr, /EROFS/, 'the root filesystem refuses a write');
  t.equal(write('/tmp/written-by-test').stdout.trim(), 'written', '/tmp is writable');
  const gateway = await request(`http://127.0.0.1:${port}/readyz`);
  t.equal(gateway.status, 200, 'the published gateway answers /readyz');
});

t.test("the walkthrough's first calls through the containerized gateway reach audit", async (t) => {
  t.match(adminKey, /^sd_key_/, 'deskctl bootstrap in the identity container printed an admin key');
  const admin = { Authorization: `Bearer ${adminKey}`, Accept: 'application/json' };
  const me = await request(`${base}/me`, { headers: admin });
  t.equal(me.status, 200, 'GET /me with the admin key');
  t.equal(me.json?.data?.role, 'admin');

  // Step 2: an agent and a key, with deskctl on the image's PATH.
  const email = `ada.${process.pid}@example.com`;
  const user = exec('identity', [
    'deskctl',
    'users',
    'create',
    '--email',
    email,
    '--name',
    'Ada',
    '--role',
    'agent',
  ]);
  t.equal(user.status, 0, `deskctl users create (${user.stderr.trim()})`);
  const created = exec('identity', [
    'deskctl',
    'api-keys',
    'create',
    '--owner',
    email,
    '--name',
    "Ada's laptop",
    '--scopes',
    'requests:read,requests:write,users:read',
    '--json',
  ]);
  const agentKey = String((JSON.parse(created.stdout || '{}') as Json).key ?? '');
  t.match(agentKey, /^sd_key_/, 'deskctl api-keys create printed the key');
  const agent = { Authorization: `Bearer ${agentKey}`, Accept: 'application/json' };

  // Step 3: a request, read back.
  const title = `VPN drops every hour ${process.pid}`;
  const made = await request(`${base}/requests`, {
    method: 'POST',
    headers: agent,
    json: { title, description: 'Since Monday the VPN disconnects hourly.', priority: 'high', tags: ['vpn'] },
  });
  t.equal(made.status, 201, 'POST /requests');
  const id = String(made.json?.data?.id);
  const read = await request(`${base}/requests/${id}`, { headers: agent });
  t.equal(read.json?.data?.title, title, 'GET /requests/:id reads it back');

  // The event reaches audit (NATS JetStream between the containers), seen through the gateway.
  let types: string[] = [];
  for (let i = 0; i < 60 && !types.includes('request.created'); i++) {
    const events = await request(`${base}/events?resourceId=${id}`, { headers: admin });
    types = ((events.json?.data?.events ?? []) as Json[]).map((e) => String(e.type));
    if (!types.includes('request.created')) await new Promise((r) => setTimeout(r, 500));
  }
  t.ok(types.includes('request.created'), `audit has request.created for ${id} (saw ${types.join(', ')})`);
});

t.test('SIGTERM stops every service within its grace', async (t) => {
  for (const s of [...SERVICES].reverse()) {
    // podman stop sends SIGTERM, then SIGKILL after the grace: an exit of 137 would be the kill.
    const stop = podman(['stop', '--time', '15', container(s)]);
    t.equal(stop.status, 0, `podman stop ${s}`);
    const code = podman(['inspect', '--format', '{{.State.ExitCode}}', container(s)]).stdout.trim();
    t.ok(['0', '143'].includes(code), `${s} exited on SIGTERM (exit ${code}; 137 means it was killed)`);
  }
});
