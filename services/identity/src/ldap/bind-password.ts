import { readFile, realpath } from 'node:fs/promises';
import { isInside, PASSWORD_ENV_PREFIX } from '../use-cases/ldap-settings.js';

/** Where a connection's bind password is: an environment variable of identity and deskctl, or a file. */
export interface PasswordReference {
  passwordEnv: string | null;
  passwordFile: string | null;
}

/**
 * Reads the bind password an LDAP connection's settings point at, when a sync starts (so a
 * rotated secret applies to the next run without a restart). The store only ever holds the
 * reference. A file (a mounted Kubernetes or Docker secret) loses one trailing newline. The
 * settings were checked (`ldapSettings`); the reader checks again what only it can see: where the
 * file really is once symbolic links are followed (a link in the secrets directory pointing at
 * another of identity's files is refused).
 */
export function bindPasswordReader(environment: (name: string) => string | undefined, secretsDir: string) {
  return async (ref: PasswordReference): Promise<string> => {
    if (ref.passwordFile) {
      const failed = (err: NodeJS.ErrnoException) => {
        throw new Error(
          `cannot read the bind password file ${ref.passwordFile} (${err.code ?? err.message})`,
        );
      };
      const [file, dir] = await Promise.all([
        realpath(ref.passwordFile).catch(failed),
        realpath(secretsDir).catch(failed),
      ]);
      if (!isInside(dir, file))
        throw new Error(
          `the bind password file ${ref.passwordFile} is not inside LDAP_SECRETS_DIR (${secretsDir})`,
        );
      const text = await readFile(file, 'utf8').catch(failed);
      return text.replace(/\r?\n$/, '');
    }
    if (!ref.passwordEnv?.startsWith(PASSWORD_ENV_PREFIX))
      throw new Error(`the bind password variable must be named ${PASSWORD_ENV_PREFIX}…`);
    const value = environment(ref.passwordEnv);
    if (!value) throw new Error(`the bind password variable ${ref.passwordEnv} is not set for identity`);
    return value;
  };
}
