#!/usr/bin/env node
// `npm run containers`: the whole stack in containers from the project's images, with podman and
// no registry: Redis, NATS with JetStream (deploy/nats.conf's users), PostgreSQL + FerretDB (the
// store; compose keeps MongoDB for machines that can pull it), the streams' one-shot and the five
// services from the application image (`npm run image`), each service read-only, as 10001, with
// a private /tmp. Their environment is docker-compose.yml's (scripts/containers/compose-env.mjs).
//
//   npm run containers [-- up]            start (or restart) the stack; prints the gateway and an admin key
//   npm run containers -- status          the containers and their state
//   npm run containers -- down [--volumes] stop and remove them (--volumes: NATS and store data too)
//   options: --name <pod> (default support-desk), --publish <addr:port> (GATEWAY_PUBLISH, default
//            127.0.0.1:8080, as compose); OAUTH_ISSUER defaults to http://<publish>.
//
// One pod holds them all: one network namespace on loopback, the compose host names (nats, redis,
// mongo, identity, …) mapped to 127.0.0.1 so compose's URLs work unchanged; only the gateway is
// published. Secrets are generated once into .data/containers/<pod>/secrets.json (development only).
import path from 'node:path';
import { parseArgs } from 'node:util';
import {
  FERRETDB_ENV,
  ferretdbArgs,
  ferretdbPostgresUrl,
  FERRETDB_ROLE,
  postgresSettings,
  redisArgs,
} from '../libs/platform/launch/servers.mjs';
import { InfraError, ROOT } from './infra/common.mjs';
import { ensureImage } from './image.mjs';
import { podman } from './image/podman.mjs';
import { ensureInfraImage } from './containers/infra-image.mjs';
import { composeArgs, composeEnv, loadCompose, SERVICES, stackSecrets } from './containers/compose-env.mjs';

const READY_TIMEOUT_MS = 120_000;
const STOP_GRACE_S = 15;
const HOSTS = ['mongo', 'redis', 'nats', 'postgres', ...SERVICES];
const say = (msg) => console.error(`[containers] ${msg}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Runs a container in the pod; `env` values reach podman's environment, never its arguments. */
function runIn(pod, name, image, { env = {}, args = [], opts = [], detach = true }) {
  const envArgs = Object.keys(env).flatMap((k) => ['--env', k]);
  const r = podman(
    [
      'run',
      ...(detach ? ['--detach'] : ['--rm']),
      '--pod',
      pod,
      '--name',
      `${pod}-${name}`,
      ...envArgs,
      ...opts,
      image,
      ...args,
    ],
    { env, allowFail: !detach },
  );
  return r;
}

const logsOf = (container) =>
  podman(['logs', '--tail', '40', container], { allowFail: true }).stderr +
  podman(['logs', '--tail', '40', container], { allowFail: true }).stdout;

/** Waits until `check()` is true, or the container has exited, for at most READY_TIMEOUT_MS. */
async function waitFor(what, container, check) {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (let i = 0; Date.now() < deadline && i < 1000; i++) {
    if (check()) return;
    const state = podman(['inspect', '--format', '{{.State.Status}}', container], {
      allowFail: true,
    }).stdout.trim();
    if (state === 'exited') throw new InfraError(`${what} exited before it was ready:\n${logsOf(container)}`);
    await sleep(1000);
  }
  throw new InfraError(`${what} not ready after ${READY_TIMEOUT_MS / 1000} s:\n${logsOf(container)}`);
}

/** A TCP port open inside the pod, asked from the given container's own node. */
const portOpen = (container, port) =>
  podman(
    [
      'exec',
      container,
      'node',
      '-e',
      `require('net').connect(${port},'127.0.0.1').on('connect',()=>process.exit(0)).on('error',()=>process.exit(1))`,
    ],
    { allowFail: true },
  ).ok;

export async function up({ pod, publish }) {
  const started = Date.now();
  const { tag: app, bases } = ensureImage();
  const infra = ensureInfraImage(bases);
  const compose = loadCompose();
  const vars = { ...stackSecrets(path.join(ROOT, '.data', 'containers', pod)), ...process.env };
  vars.OAUTH_ISSUER ??= `http://${publish}`;
  down({ pod, volumes: false, quiet: true });
  const hosts = HOSTS.flatMap((h) => ['--add-host', `${h}:127.0.0.1`]);
  podman(['pod', 'create', '--name', pod, '--publish', `${publish}:8080`, ...hosts]);
  say(`pod ${pod}: gateway published on ${publish}`);

  // The servers (their data on named volumes, chowned to the user they run as).
  const redisCmd = composeArgs(compose.services.redis.command, vars);
  runIn(pod, 'redis', infra, {
    opts: ['--user', '10001:10001'],
    args: [...redisCmd, ...redisArgs({ host: '127.0.0.1', port: 6379, dir: '/tmp' })],
  });
  runIn(pod, 'nats', infra, {
    env: composeEnv(compose, 'nats', vars),
    opts: [
      '--user',
      '10001:10001',
      '--volume',
      `${path.join(ROOT, 'deploy/nats.conf')}:/etc/nats/nats.conf:ro`,
      '--volume',
      `${pod}-nats:/data:U`,
    ],
    args: composeArgs(compose.services.nats.command, vars),
  });
  const pgData = '/var/lib/postgresql/data';
  const settings = postgresSettings({ host: '127.0.0.1', port: 5432, socketDir: '/tmp' });
  runIn(pod, 'postgres', infra, {
    opts: ['--user', 'postgres', '--shm-size', '256m', '--volume', `${pod}-pgdata:${pgData}:U`],
    args: [
      'sh',
      '-c',
      `[ -s ${pgData}/PG_VERSION ] || initdb -D ${pgData} -U ${FERRETDB_ROLE} --auth=trust --encoding=UTF8 --locale=C >/dev/null; exec postgres -D ${pgData} "$@"`,
      'postgres',
      ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`]),
    ],
  });
  const postgresqlUrl = ferretdbPostgresUrl({ host: '127.0.0.1', port: 5432, database: 'postgres' });
  runIn(pod, 'ferretdb', infra, {
    env: FERRETDB_ENV,
    opts: ['--user', '10001:10001'],
    args: ['ferretdb', ...ferretdbArgs({ host: '127.0.0.1', port: 27017, dir: '/tmp', postgresqlUrl })],
  });
  // Asked from the NATS container, which has node (the build base): Redis, NATS, the store.
  for (const [what, port] of [
    ['redis', 6379],
    ['nats', 4222],
    ['postgres', 5432],
    ['ferretdb', 27017],
  ])
    await waitFor(what, `${pod}-${what}`, () => portOpen(`${pod}-nats`, port));

  // The operator's step before any service: the streams, as the provisioner (compose's one-shot).
  const streams = compose.services['nats-streams'];
  const provisioned = runIn(pod, 'nats-streams', app, {
    env: composeEnv(compose, 'nats-streams', vars),
    opts: ['--read-only', '--tmpfs', '/tmp'],
    args: composeArgs(streams.command, vars),
    detach: false,
  });
  if (!provisioned.ok)
    throw new InfraError(`provisioning the streams failed:\n${provisioned.stderr}${provisioned.stdout}`);

  // The services: read-only, the image's user, /tmp their only writable place.
  const start = (s) =>
    runIn(pod, s, app, {
      env: { ...composeEnv(compose, s, vars), SERVICE: s },
      opts: ['--read-only', '--tmpfs', '/tmp:rw,mode=1777,size=64m', '--stop-timeout', String(STOP_GRACE_S)],
    });
  const healthy = (s) => {
    const test = compose.services[s].healthcheck.test;
    return podman(['exec', `${pod}-${s}`, ...composeArgs(test.slice(1), vars)], { allowFail: true }).ok;
  };
  const backends = SERVICES.filter((s) => s !== 'gateway');
  for (const s of backends) start(s);
  for (const s of backends) await waitFor(s, `${pod}-${s}`, () => healthy(s));
  start('gateway');
  await waitFor('gateway', `${pod}-gateway`, () => healthy('gateway'));
  say(`ready in ${((Date.now() - started) / 1000).toFixed(0)} s: http://${publish} (image ${app})`);

  // The first admin, as `npm start` makes it: deskctl in the identity container, once.
  const boot = podman(
    [
      'exec',
      `${pod}-identity`,
      'deskctl',
      'bootstrap',
      '--email',
      'admin@example.com',
      '--name',
      'Admin',
      '--if-none',
      '--json',
    ],
    { allowFail: true },
  );
  if (!boot.ok) throw new InfraError(`deskctl bootstrap failed:\n${boot.stderr}${boot.stdout}`);
  const key = /"key"\s*:\s*"([^"]+)"/.exec(boot.stdout)?.[1];
  console.log(`gateway  http://${publish}`);
  if (key) console.log(`admin API key (shown once): ${key}`);
  else console.log('an admin exists already (deskctl bootstrap --if-none made none)');
  console.log(`deskctl: podman exec -it ${pod}-identity deskctl --help`);
}

export function down({ pod, volumes, quiet = false }) {
  const exists = podman(['pod', 'exists', pod], { allowFail: true }).ok;
  if (exists) {
    podman(['pod', 'stop', '--time', String(STOP_GRACE_S), pod], { allowFail: true });
    podman(['pod', 'rm', '--force', pod]);
  }
  if (volumes)
    for (const v of ['nats', 'pgdata'])
      podman(['volume', 'rm', '--force', `${pod}-${v}`], { allowFail: true });
  if (!quiet) say(exists ? `pod ${pod} removed${volumes ? ' with its volumes' : ''}` : `no pod ${pod}`);
}

function status({ pod }) {
  const r = podman(['ps', '--all', '--filter', `pod=${pod}`, '--format', '{{.Names}}\t{{.Status}}'], {
    allowFail: true,
  });
  console.log(r.stdout.trim() || `no pod ${pod}`);
}

async function main() {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { name: { type: 'string' }, publish: { type: 'string' }, volumes: { type: 'boolean' } },
  });
  const command = positionals[0] ?? 'up';
  const pod = values.name ?? 'support-desk';
  const publish = values.publish ?? process.env.GATEWAY_PUBLISH ?? '127.0.0.1:8080';
  if (command === 'up') await up({ pod, publish });
  else if (command === 'down') down({ pod, volumes: values.volumes });
  else if (command === 'status') status({ pod });
  else throw new InfraError(`unknown command ${command} (up, down, status)`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err) => {
    say(err instanceof InfraError ? err.message : (err.stack ?? String(err)));
    process.exit(1);
  });
}
