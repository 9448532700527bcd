import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Teardownable } from './env.js';
import { findBinary, freePort, type PrivateServer, privateServer } from './servers.js';

/**
 * A real OpenLDAP server (Debian's `slapd`) for the directory sync's tests: a generated directory
 * (people and groups under one suffix) loaded with `slapadd` before the first start, served on a
 * loopback port from a temporary directory, changed while it runs with `ldapmodify` (the admin
 * bypasses the ACLs), stopped at teardown. `stop()` makes it refuse connections and `pause(true)`
 * makes it answer nothing, for the failure cases.
 */

export interface LdapPerson {
  uid: string;
  cn: string;
  mail: string;
  sn?: string;
  title?: string;
  departmentNumber?: string;
  employeeType?: string;
}

export interface LdapGroup {
  cn: string;
  /** Member uids (groupOfNames needs at least one). */
  members: string[];
}

export interface PrivateSlapd extends PrivateServer {
  suffix: string;
  peopleDn: string;
  groupsDn: string;
  /** A read-only account, as a sync job would be given (the ACLs let it read everything but passwords). */
  reader: { dn: string; password: string };
  userDn(uid: string): string;
  groupDn(cn: string): string;
  /** Applies an LDIF change set (add/modify/delete records) as the administrator. */
  modify(ldif: string): Promise<void>;
  addPerson(p: LdapPerson): Promise<void>;
  removePerson(uid: string): Promise<void>;
  /** Replaces (or with `null` deletes) one attribute of an entry. */
  setAttribute(dn: string, attribute: string, value: string | string[] | null): Promise<void>;
}

const SCHEMAS = ['core', 'cosine', 'inetorgperson', 'nis'];
const ADMIN_PASSWORD = 'admin-secret';

/** `n` people `user1..n` (`user1@example.test`, "User 1"), in departments d1..d3. */
export function generatePeople(n: number, domain = 'example.test'): LdapPerson[] {
  return Array.from({ length: n }, (_, i) => ({
    uid: `user${i + 1}`,
    cn: `User ${i + 1}`,
    sn: `${i + 1}`,
    mail: `user${i + 1}@${domain}`,
    title: 'Agent',
    departmentNumber: `d${(i % 3) + 1}`,
  }));
}

/** Installs slapd and ldap-utils with apt-get when missing and running as root (what `npm test` does too). */
export function ensureSlapdInstalled(): void {
  const present = () => ['slapd', 'slapadd', 'ldapmodify'].every((b) => findOrNull(b) !== null);
  if (present()) return;
  if (typeof process.getuid === 'function' && process.getuid() === 0) {
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    spawnSync('apt-get', ['update'], { stdio: 'ignore', env, timeout: 300_000 });
    spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'slapd', 'ldap-utils'], {
      stdio: 'ignore',
      env,
      timeout: 600_000,
    });
  }
  if (!present()) throw new Error('slapd/ldap-utils missing: sudo apt-get install slapd ldap-utils');
}

function findOrNull(name: string): string | null {
  try {
    return findBinary(name);
  } catch {
    return null;
  }
}

const entry = (lines: (string | false | undefined)[]) => lines.filter(Boolean).join('\n') + '\n\n';

export function personLdif(p: LdapPerson, peopleDn: string): string {
  return entry([
    `dn: uid=${p.uid},${peopleDn}`,
    'objectClass: inetOrgPerson',
    `uid: ${p.uid}`,
    `cn: ${p.cn}`,
    `sn: ${p.sn ?? p.cn}`,
    `mail: ${p.mail}`,
    p.title && `title: ${p.title}`,
    p.departmentNumber && `departmentNumber: ${p.departmentNumber}`,
    p.employeeType && `employeeType: ${p.employeeType}`,
  ]);
}

function slapdConf(dir: string, suffix: string, readerDn: string): string {
  return [
    ...SCHEMAS.map((s) => `include /etc/ldap/schema/${s}.schema`),
    'modulepath /usr/lib/ldap',
    'moduleload back_mdb',
    `pidfile ${join(dir, 'slapd.pid')}`,
    `argsfile ${join(dir, 'slapd.args')}`,
    'database mdb',
    'maxsize 67108864',
    `suffix "${suffix}"`,
    `rootdn "cn=admin,${suffix}"`,
    `rootpw ${ADMIN_PASSWORD}`,
    `directory ${join(dir, 'db')}`,
    'index objectClass eq',
    'access to attrs=userPassword by anonymous auth by * none',
    `access to * by dn.exact="${readerDn}" read by * none`,
    '',
  ].join('\n');
}

/** Starts a slapd serving `people` and `groups` under `suffix` (ou=people, ou=groups, ou=system). */
export async function startPrivateSlapd(
  t: Teardownable,
  {
    people = generatePeople(10),
    groups = [],
    suffix = 'dc=example,dc=test',
  }: { people?: LdapPerson[]; groups?: LdapGroup[]; suffix?: string } = {},
): Promise<PrivateSlapd> {
  ensureSlapdInstalled();
  const port = await freePort();
  const peopleDn = `ou=people,${suffix}`;
  const groupsDn = `ou=groups,${suffix}`;
  const reader = { dn: `cn=sync,ou=system,${suffix}`, password: 'sync-reader-secret' };
  const userDn = (uid: string) => `uid=${uid},${peopleDn}`;
  const groupDn = (cn: string) => `cn=${cn},${groupsDn}`;
  const dc = /^dc=([^,]+)/.exec(suffix)?.[1] ?? 'example';
  const initial =
    entry([`dn: ${suffix}`, 'objectClass: dcObject', 'objectClass: organization', `dc: ${dc}`, `o: ${dc}`]) +
    ['people', 'groups', 'system']
      .map((ou) => entry([`dn: ou=${ou},${suffix}`, 'objectClass: organizationalUnit', `ou: ${ou}`]))
      .join('') +
    entry([
      `dn: ${reader.dn}`,
      'objectClass: person',
      'cn: sync',
      'sn: sync',
      `userPassword: ${reader.password}`,
    ]) +
    people.map((p) => personLdif(p, peopleDn)).join('') +
    groups
      .map((g) =>
        entry([
          `dn: ${groupDn(g.cn)}`,
          'objectClass: groupOfNames',
          `cn: ${g.cn}`,
          ...g.members.map((m) => `member: ${userDn(m)}`),
        ]),
      )
      .join('');

  let logFile = '';
  const server = privateServer(
    t,
    'ldap',
    (p, dir) => {
      const conf = join(dir, 'slapd.conf');
      logFile = join(dir, 'slapd.log');
      // The directory is generated once; a restart serves what it held (as a real server would).
      if (!existsSync(join(dir, 'db'))) {
        mkdirSync(join(dir, 'db'));
        writeFileSync(conf, slapdConf(dir, suffix, reader.dn));
        writeFileSync(join(dir, 'initial.ldif'), initial);
        const load = spawnSync(findBinary('slapadd'), ['-f', conf, '-l', join(dir, 'initial.ldif')], {
          encoding: 'utf8',
          timeout: 60_000,
        });
        if (load.status !== 0) throw new Error(`slapadd failed: ${load.stderr || load.error?.message}`);
      }
      // -d 0: stay in the foreground (no fork), so the process is ours to stop.
      return {
        bin: findBinary('slapd'),
        args: ['-f', conf, '-h', `ldap://127.0.0.1:${p}/`, '-d', '0'],
        logFile,
      };
    },
    port,
  );
  try {
    await server.start();
  } catch (err) {
    const log = logFile && existsSync(logFile) ? readFileSync(logFile, 'utf8').slice(-2000) : '';
    throw new Error(`${(err as Error).message}\n${log}`);
  }

  const modify = async (ldif: string) => {
    const args = ['-x', '-H', server.url, '-D', `cn=admin,${suffix}`, '-w', ADMIN_PASSWORD];
    const child = spawn(findBinary('ldapmodify'), args, { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const code = await new Promise<number | null>((res) => {
      child.once('close', res);
      child.stdin.end(ldif);
    });
    clearTimeout(timer);
    if (code !== 0) throw new Error(`ldapmodify failed (${code}): ${stderr}`);
  };

  return Object.assign(server, {
    suffix,
    peopleDn,
    groupsDn,
    reader,
    userDn,
    groupDn,
    modify,
    // The record's first line is its dn: the change type follows it.
    addPerson: (p: LdapPerson) => modify(personLdif(p, peopleDn).replace('\n', '\nchangetype: add\n')),
    removePerson: (uid: string) => modify(`dn: ${userDn(uid)}\nchangetype: delete\n\n`),
    setAttribute: (dn: string, attribute: string, value: string | string[] | null) =>
      modify(
        value === null
          ? `dn: ${dn}\nchangetype: modify\ndelete: ${attribute}\n\n`
          : `dn: ${dn}\nchangetype: modify\nreplace: ${attribute}\n` +
              [value]
                .flat()
                .map((v) => `${attribute}: ${v}\n`)
                .join('') +
              '\n',
      ),
  });
}
