import { PLANS } from '@support-desk/contracts';
import type { ComponentChildren } from 'preact';
import { AlertBox, Layout } from './layout.js';
import { CsrfField } from './oauth.js';

export { CsrfField } from './oauth.js';

/** The console's sections, in navigation order. */
const SECTIONS = [
  { path: '/settings/api-keys', label: 'API keys' },
  { path: '/settings/ip-allowlist', label: 'IP allowlist' },
  { path: '/settings/oauth-clients', label: 'OAuth clients' },
  { path: '/settings/webhooks', label: 'Webhooks' },
  { path: '/settings/sla-policies', label: 'SLA policies' },
  { path: '/settings/trash', label: 'Trash' },
  { path: '/settings/users', label: 'Users' },
] as const;

export type SectionPath = (typeof SECTIONS)[number]['path'];

/** What every console page knows: who is signed in, and the CSRF token for its forms. */
export interface Frame {
  csrf: string;
  email: string;
}

/** A console page: navigation (the current section marked), who is signed in, sign-out. */
export function consolePage(
  title: string,
  section: SectionPath | null,
  frame: Frame,
  body: ComponentChildren,
) {
  const header = (
    <>
      <nav aria-label="Settings">
        <ul>
          {SECTIONS.map((s) => (
            <li>
              <a href={s.path} aria-current={s.path === section ? 'page' : undefined}>
                {s.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <div class="who">
        <span>
          Signed in as <strong>{frame.email}</strong>
        </span>
        <form method="post" action="/settings/logout">
          <CsrfField csrf={frame.csrf} />
          <button type="submit" class="secondary">
            Sign out
          </button>
        </form>
      </div>
    </>
  );
  return (
    <Layout title={title} width="wide" header={header} script>
      {body}
    </Layout>
  );
}

/**
 * A value shown once (a key, a client secret): read-only, selectable, with a copy button, and
 * (unless `warn` is false) the warning that it cannot be shown again.
 */
export function ShownOnce({
  id,
  label,
  value,
  warn = true,
}: {
  id: string;
  label: string;
  value: string;
  warn?: boolean;
}) {
  return (
    <>
      <label for={id}>{label}</label>
      <div class="secret">
        <input
          id={id}
          type="text"
          readonly
          value={value}
          aria-describedby={warn ? `${id}-hint` : undefined}
        />
        <button type="button" class="secondary" data-copy={id}>
          Copy
        </button>
      </div>
      {warn && (
        <p class="hint" id={`${id}-hint`}>
          Store it now: it is shown only once and cannot be recovered.
        </p>
      )}
    </>
  );
}

/** The page a signed-in non-administrator gets, with a way to sign out. */
export function refusedPage(frame: Frame) {
  return (
    <Layout title="Administrators only">
      <AlertBox
        message={`${frame.email} is not an administrator. Only users with the admin role can use the settings console.`}
      />
      <p>Ask an administrator to change your role, or sign in with another account.</p>
      <form method="post" action="/settings/logout">
        <CsrfField csrf={frame.csrf} />
        <button type="submit">Sign out</button>
      </form>
    </Layout>
  );
}

/** What a console form with a missing or wrong CSRF token gets: nothing was changed. */
export const formExpiredPage = () => (
  <Layout title="Form expired">
    <p class="error" role="alert">
      The form expired or was not sent by this site. Nothing was changed.
    </p>
    <p>
      <a href="/settings">Back to the settings</a>
    </p>
  </Layout>
);

/** A page's answer when what its address names is not there: why, and the way back. */
export const Missing = ({ message, back, label }: { message: string; back: string; label: string }) => (
  <>
    <p class="error" role="alert">
      {message}
    </p>
    <p>
      <a href={back}>{label}</a>
    </p>
  </>
);

/** A moment as the day, and the time (UTC) under it (or beside it: `inline`): narrow columns in wide tables. */
export function DateCell({
  iso,
  none = '—',
  inline = false,
}: {
  iso: string | null;
  none?: string;
  inline?: boolean;
}) {
  if (!iso) return <span class="muted">{none}</span>;
  return (
    <>
      <time dateTime={iso}>{iso.slice(0, 10)}</time>
      {inline ? ' ' : <br />}
      <span class="muted">{iso.slice(11, 16)} UTC</span>
    </>
  );
}

export const Tags = ({ values }: { values: readonly string[] }) =>
  values.length ? (
    <>
      {values.map((v) => (
        <span class="tag">{v}</span>
      ))}
    </>
  ) : (
    <span class="muted">—</span>
  );

/** A confirmation step (revocations, deletions): what will happen, a danger button, and a way back. */
export function ConfirmBody(opts: {
  frame: Frame;
  action: string;
  id: string;
  question: string;
  consequence: string;
  button: string;
  back: string;
}) {
  return (
    <>
      <p class="warning" role="alert">
        {opts.question}
      </p>
      <p>{opts.consequence}</p>
      <form method="post" action={opts.action}>
        <CsrfField csrf={opts.frame.csrf} />
        <input type="hidden" name="id" value={opts.id} />
        <button type="submit" class="danger">
          {opts.button}
        </button>
        <a class="button secondary" href={opts.back}>
          Cancel
        </a>
      </form>
    </>
  );
}

/** The plan of a new credential (API key, OAuth client): `standard` unless the form said another. */
export function PlanSelect({ id, chosen }: { id: string; chosen: string | undefined }) {
  return (
    <>
      <label for={id}>Plan</label>
      <select id={id} name="plan">
        {PLANS.map((p) => (
          <option value={p} selected={(chosen ?? 'standard') === p}>
            {p}
          </option>
        ))}
      </select>
    </>
  );
}
