import { readFile } from 'node:fs/promises';

/** Where a connection's bind password is: an environment variable of identity and deskctl, or a file. */
export interface PasswordReference {
  passwordEnv: string | null;
  passwordFile: string | null;
}

/**
 * Reads the bind password an LDAP connection's settings point at, when a sync starts (so a
 * rotated secret applies to the next run without a restart). The store only ever holds the
 * reference. A file (a mounted Kubernetes or Docker secret) loses one trailing newline.
 */
export function bindPasswordReader(environment: (name: string) => string | undefined) {
  return async (ref: PasswordReference): Promise<string> => {
    if (ref.passwordFile) {
      const text = await readFile(ref.passwordFile, 'utf8').catch((err: NodeJS.ErrnoException) => {
        throw new Error(
          `cannot read the bind password file ${ref.passwordFile} (${err.code ?? err.message})`,
        );
      });
      return text.replace(/\r?\n$/, '');
    }
    const value = ref.passwordEnv ? environment(ref.passwordEnv) : undefined;
    if (!value) throw new Error(`the bind password variable ${ref.passwordEnv} is not set for identity`);
    return value;
  };
}
