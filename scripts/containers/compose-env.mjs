// The environment of `npm run containers`, read from docker-compose.yml (the one place it is
// written) rather than copied: each service's `environment`, the NATS users' passwords, Redis's
// ACL command line, with compose's ${VAR}, ${VAR:-default}, ${VAR:?message} and $$ filled in
// from the secrets below. Only the store differs: MongoDB cannot be had without a registry, so
// the services reach FerretDB on PostgreSQL (MONGO_URL), as `npm start` does.
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { InfraError, ROOT } from '../infra/common.mjs';

export const SERVICES = ['identity', 'requests', 'audit', 'webhooks', 'gateway'];

export function loadCompose(file = path.join(ROOT, 'docker-compose.yml')) {
  return YAML.parse(fs.readFileSync(file, 'utf8'), { merge: true });
}

/** compose's interpolation of one value (strings only; numbers and booleans pass as text). */
export function interpolate(value, vars) {
  return String(value).replace(
    /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}/g,
    (all, name, op, arg) => {
      if (all === '$$') return '$';
      const v = vars[name];
      const unset = v === undefined || (op?.startsWith(':') && v === '');
      if (!op) return v ?? '';
      if (op.endsWith('-')) return unset ? arg : v;
      if (unset) throw new InfraError(`${name} is not set: ${arg}`);
      return v;
    },
  );
}

const ed25519 = () => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    priv: privateKey.export({ type: 'pkcs8', format: 'pem' }),
    pub: publicKey.export({ type: 'spki', format: 'pem' }),
  };
};
const password = () => randomBytes(24).toString('hex');

/** Every variable compose requires, generated as deploy/README.md tells operators to. */
export function generateSecrets() {
  const principal = ed25519();
  const own = Object.fromEntries(['gateway', 'identity', 'requests', 'webhooks'].map((s) => [s, ed25519()]));
  const oauth = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
  const vars = {
    PRINCIPAL_SIGNING_KEY: principal.priv,
    PRINCIPAL_VERIFY_KEYS: principal.pub,
    OAUTH_SIGNING_KEYS: JSON.stringify([{ ...oauth, kid: randomUUID(), alg: 'ES256' }]),
    SERVICE_VERIFY_KEYS: JSON.stringify(Object.fromEntries(Object.entries(own).map(([s, k]) => [s, k.pub]))),
    WEBHOOKS_SECRET_KEY: randomBytes(32).toString('base64'),
    REDIS_GATEWAY_PASSWORD: password(),
  };
  for (const [s, k] of Object.entries(own)) vars[`${s.toUpperCase()}_SIGNING_KEY`] = k.priv;
  for (const s of ['PROVISIONER', 'GATEWAY', 'IDENTITY', 'REQUESTS', 'AUDIT', 'WEBHOOKS'])
    vars[`NATS_${s}_PASSWORD`] = password();
  return vars;
}

/** The secrets of one stack, made once and kept (mode 0600) in its data directory. */
export function stackSecrets(dir) {
  const file = path.join(dir, 'secrets.json');
  if (fs.existsSync(file)) return JSON.parse(fs.readFileSync(file, 'utf8'));
  const vars = generateSecrets();
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, `${JSON.stringify(vars, null, 1)}\n`, { mode: 0o600 });
  return vars;
}

/** The store the local container run uses: FerretDB (trust on the pod's loopback to PostgreSQL). */
export const LOCAL_MONGO_URL = 'mongodb://mongo:27017/';

/** One compose service's environment, interpolated; `store: 'ferretdb'` points MONGO_URL at FerretDB. */
export function composeEnv(compose, name, vars, { store = 'ferretdb' } = {}) {
  const service = compose.services?.[name];
  if (!service) throw new InfraError(`docker-compose.yml has no service ${name}`);
  const env = {};
  for (const [k, v] of Object.entries(service.environment ?? {})) env[k] = interpolate(v ?? '', vars);
  if (store === 'ferretdb' && 'MONGO_URL' in env) env.MONGO_URL = LOCAL_MONGO_URL;
  return env;
}

/** A compose service's command (or healthcheck test) with its variables filled in. */
export const composeArgs = (args, vars) => args.map((a) => interpolate(a, vars));
