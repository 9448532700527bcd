// The releases' dependencies inside the single-node cluster, from the infrastructure image
// (scripts/containers/infra-image.mjs: nats-server, redis-server, PostgreSQL and FerretDB), in
// the namespaces and with the pod labels the values files' NetworkPolicies name (deploy/README.md,
// "Before the first install"): NATS with JetStream as `nats.nats:4222`, Redis as
// `redis-master.redis:6379`, and FerretDB on PostgreSQL standing in for MongoDB as
// `mongodb.mongodb:27017` (no MongoDB image can be had without a registry). Their data lives in
// emptyDir volumes: enough for a test cluster, not for keeping anything.
import fs from 'node:fs';
import path from 'node:path';
import {
  FERRETDB_ENV,
  FERRETDB_ROLE,
  ferretdbArgs,
  ferretdbPostgresUrl,
  postgresSettings,
  redisArgs,
} from '../../libs/platform/launch/servers.mjs';
import { ROOT } from '../infra/common.mjs';
import { composeArgs, loadCompose } from '../containers/compose-env.mjs';

/** Debian's postgres user and group in the infrastructure image. */
const POSTGRES_UID = 101;
const POSTGRES_GID = 103;
const APP_UID = 10001;

const NATS_USERS = ['PROVISIONER', 'GATEWAY', 'IDENTITY', 'REQUESTS', 'AUDIT', 'WEBHOOKS'];

const labels = (name) => ({
  'app.kubernetes.io/name': name,
  'app.kubernetes.io/part-of': 'support-desk-deps',
});

const nonRoot = (uid, gid = uid) => ({
  runAsNonRoot: true,
  runAsUser: uid,
  runAsGroup: gid,
  allowPrivilegeEscalation: false,
  capabilities: { drop: ['ALL'] },
  seccompProfile: { type: 'RuntimeDefault' },
});

function deployment(ns, name, { containers, volumes, fsGroup }) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: ns, labels: labels(name) },
    spec: {
      replicas: 1,
      // One data directory per server: never two at once.
      strategy: { type: 'Recreate' },
      selector: { matchLabels: labels(name) },
      template: {
        metadata: { labels: labels(name) },
        spec: {
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          securityContext: fsGroup ? { fsGroup } : {},
          containers,
          volumes,
        },
      },
    },
  };
}

const service = (ns, name, selectorName, ports) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: ns, labels: labels(selectorName) },
  spec: { selector: labels(selectorName), ports: ports.map(([n, port]) => ({ name: n, port })) },
});

const tcpReady = (port) => ({ tcpSocket: { port }, periodSeconds: 2, failureThreshold: 60 });

/** Every object, for `kubectl apply`, given the infrastructure image and the platform's secrets. */
export function dependencyObjects(image, secrets) {
  const compose = loadCompose();
  const objects = ['nats', 'redis', 'mongodb'].map((ns) => ({
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: ns },
  }));

  // NATS: deploy/nats.conf (every service's user; its passwords from the environment).
  objects.push(
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'nats-config', namespace: 'nats' },
      data: { 'nats.conf': fs.readFileSync(path.join(ROOT, 'deploy', 'nats.conf'), 'utf8') },
    },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'nats-users', namespace: 'nats' },
      stringData: Object.fromEntries(
        NATS_USERS.map((u) => [`NATS_${u}_PASSWORD`, secrets[`NATS_${u}_PASSWORD`]]),
      ),
    },
    deployment('nats', 'nats', {
      containers: [
        {
          name: 'nats',
          image,
          imagePullPolicy: 'Never',
          command: ['nats-server', '--config', '/etc/nats/nats.conf'],
          envFrom: [{ secretRef: { name: 'nats-users' } }],
          ports: [{ containerPort: 4222 }, { containerPort: 8222 }],
          readinessProbe: {
            httpGet: { path: '/healthz?js-enabled-only=true', port: 8222 },
            periodSeconds: 2,
            failureThreshold: 60,
          },
          securityContext: { ...nonRoot(APP_UID), readOnlyRootFilesystem: true },
          volumeMounts: [
            { name: 'config', mountPath: '/etc/nats' },
            { name: 'data', mountPath: '/data' },
          ],
        },
      ],
      volumes: [
        { name: 'config', configMap: { name: 'nats-config' } },
        { name: 'data', emptyDir: {} },
      ],
      fsGroup: APP_UID,
    }),
    service('nats', 'nats', 'nats', [
      ['client', 4222],
      ['monitor', 8222],
    ]),
  );

  // Redis: compose's command line (the default user off, the gateway's user and its ACL), its
  // password from a Secret through the container's environment.
  const redisCommand = composeArgs(compose.services.redis.command, {
    REDIS_GATEWAY_PASSWORD: '$(REDIS_GATEWAY_PASSWORD)',
  });
  objects.push(
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'redis-users', namespace: 'redis' },
      stringData: { REDIS_GATEWAY_PASSWORD: secrets.REDIS_GATEWAY_PASSWORD },
    },
    deployment('redis', 'redis', {
      containers: [
        {
          name: 'redis',
          image,
          imagePullPolicy: 'Never',
          command: [...redisCommand, ...redisArgs({ host: '0.0.0.0', port: 6379, dir: '/tmp' })],
          env: [
            {
              name: 'REDIS_GATEWAY_PASSWORD',
              valueFrom: { secretKeyRef: { name: 'redis-users', key: 'REDIS_GATEWAY_PASSWORD' } },
            },
          ],
          ports: [{ containerPort: 6379 }],
          readinessProbe: tcpReady(6379),
          securityContext: { ...nonRoot(APP_UID), readOnlyRootFilesystem: true },
          volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
        },
      ],
      volumes: [{ name: 'tmp', emptyDir: {} }],
    }),
    service('redis', 'redis-master', 'redis', [['redis', 6379]]),
  );

  // The store: PostgreSQL and FerretDB in one pod (FerretDB reaches PostgreSQL on the pod's
  // loopback with trust authentication, as `npm run containers` does).
  const pgData = '/var/lib/postgresql/data';
  const settings = postgresSettings({ host: '127.0.0.1', port: 5432, socketDir: '/tmp' });
  objects.push(
    deployment('mongodb', 'mongodb', {
      containers: [
        {
          name: 'postgres',
          image,
          imagePullPolicy: 'Never',
          command: [
            'sh',
            '-c',
            `[ -s ${pgData}/PG_VERSION ] || initdb -D ${pgData} -U ${FERRETDB_ROLE} --auth=trust --encoding=UTF8 --locale=C >/dev/null; exec postgres -D ${pgData} "$@"`,
            'postgres',
            ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`]),
          ],
          // It listens on the pod's loopback only: asked from inside.
          readinessProbe: {
            exec: { command: ['pg_isready', '--quiet', '--host=/tmp', '--port=5432'] },
            periodSeconds: 2,
            failureThreshold: 60,
          },
          securityContext: { ...nonRoot(POSTGRES_UID, POSTGRES_GID), readOnlyRootFilesystem: true },
          volumeMounts: [
            { name: 'pgdata', mountPath: '/var/lib/postgresql' },
            { name: 'pgtmp', mountPath: '/tmp' },
            { name: 'pgrun', mountPath: '/var/run/postgresql' },
            { name: 'shm', mountPath: '/dev/shm' },
          ],
        },
        {
          name: 'ferretdb',
          image,
          imagePullPolicy: 'Never',
          command: [
            'ferretdb',
            ...ferretdbArgs({
              host: '0.0.0.0',
              port: 27017,
              dir: '/tmp',
              postgresqlUrl: ferretdbPostgresUrl({ host: '127.0.0.1', port: 5432, database: 'postgres' }),
            }),
          ],
          env: Object.entries(FERRETDB_ENV).map(([name, value]) => ({ name, value })),
          ports: [{ containerPort: 27017 }],
          readinessProbe: tcpReady(27017),
          securityContext: { ...nonRoot(APP_UID), readOnlyRootFilesystem: true },
          volumeMounts: [{ name: 'ferretdb', mountPath: '/tmp' }],
        },
      ],
      volumes: [
        { name: 'pgdata', emptyDir: {} },
        { name: 'pgtmp', emptyDir: {} },
        { name: 'pgrun', emptyDir: {} },
        { name: 'shm', emptyDir: { medium: 'Memory', sizeLimit: '256Mi' } },
        { name: 'ferretdb', emptyDir: {} },
      ],
      fsGroup: POSTGRES_GID,
    }),
    service('mongodb', 'mongodb', 'mongodb', [['mongodb', 27017]]),
  );
  return objects;
}

/** The platform's URLs of these dependencies, for the releases' Secrets (passwords from `secrets`). */
export function dependencyUrls(secrets) {
  return {
    mongo: 'mongodb://mongodb.mongodb.svc.cluster.local:27017/',
    nats: (user) =>
      `nats://${user}:${secrets[`NATS_${user.toUpperCase()}_PASSWORD`]}@nats.nats.svc.cluster.local:4222`,
    redis: `redis://gateway:${secrets.REDIS_GATEWAY_PASSWORD}@redis-master.redis.svc.cluster.local:6379`,
  };
}
