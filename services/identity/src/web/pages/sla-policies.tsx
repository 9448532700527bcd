import { PRIORITIES, type SlaPolicy } from '@support-desk/contracts';
import { consolePage, CsrfField, DateCell, type Frame, Tags } from './frame.js';
import { Messages } from './layout.js';
import { ActionHeading, CreatePanel, Table, RowHeading } from './lists.js';

const SECTION = '/settings/sla-policies';

/** What the create form starts with: a complete policy to edit (the API body of `POST /v1/sla-policies`). */
const EXAMPLE_POLICY = JSON.stringify(
  {
    name: 'office-hours',
    description: 'Weekdays in Berlin',
    match: { priorities: ['critical', 'high'] },
    targets: {
      critical: { firstResponseMinutes: 30, resolutionMinutes: 240 },
      high: { firstResponseMinutes: 60, resolutionMinutes: 480 },
      medium: { firstResponseMinutes: 240, resolutionMinutes: 1440 },
      low: { firstResponseMinutes: 480, resolutionMinutes: 2880 },
    },
    calendar: {
      timeZone: 'Europe/Berlin',
      hours: [{ days: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'], from: '09:00', to: '17:00' }],
      holidays: [],
    },
    pauseStatuses: ['pending'],
  },
  null,
  2,
);

export interface SlaPoliciesPageOptions {
  frame: Frame;
  /** null: the requests service is not answering (the page says so; the rest still works). */
  policies: SlaPolicy[] | null;
  notice?: string;
  error?: string;
  /** The JSON text as sent, to show again after a refusal. */
  form?: string;
}

function MatchText({ p }: { p: SlaPolicy }) {
  const m = p.match;
  const parts = [
    ...(m.priorities ? [`priority ${m.priorities.join(', ')}`] : []),
    ...(m.groups ? [`group ${m.groups.join(', ')}`] : []),
    ...(m.vip !== undefined ? [m.vip ? 'VIP requester' : 'not a VIP requester'] : []),
  ];
  return parts.length ? <>{parts.join('; ')}</> : <span class="muted">every request</span>;
}

const Targets = ({ p }: { p: SlaPolicy }) => (
  <>
    {PRIORITIES.map((k, i) => (
      <>
        {i > 0 && <br />}
        {`${k}: ${p.targets[k].firstResponseMinutes} / ${p.targets[k].resolutionMinutes} min`}
      </>
    ))}
  </>
);

function PolicyRow({ p }: { p: SlaPolicy }) {
  return (
    <tr data-policy-id={p.id}>
      <RowHeading name={p.name}>
        <span class="muted">{p.id}</span>
      </RowHeading>
      <td>{p.position}</td>
      <td class="wrap">
        <MatchText p={p} />
      </td>
      <td>
        <Targets p={p} />
      </td>
      <td>{p.calendar.timeZone}</td>
      <td>
        <Tags values={p.pauseStatuses} />
      </td>
      <td>
        <DateCell iso={p.updatedAt} />
      </td>
      <td>
        <a
          class="button danger"
          href={`${SECTION}/delete?id=${encodeURIComponent(p.id)}`}
          aria-label={`Delete ${p.name}`}
        >
          Delete…
        </a>
      </td>
    </tr>
  );
}

function PolicyList({ policies }: { policies: SlaPolicy[] }) {
  if (policies.length === 0)
    return (
      <p class="muted" id="no-rows">
        No SLA policies yet: every request gets the fallback targets.
      </p>
    );
  const caption = `${policies.length} SLA ${policies.length === 1 ? 'policy' : 'policies'}, in the order they are tried`;
  const head = [
    'Name',
    'Position',
    'Applies to',
    'First response / resolution',
    'Time zone',
    'Pauses on',
    'Updated',
    <ActionHeading />,
  ];
  return (
    <Table caption={caption} head={head}>
      {policies.map((p) => (
        <PolicyRow p={p} />
      ))}
    </Table>
  );
}

/** The create form (a JSON text area) at the top, then the policies in the order they are tried. */
export function slaPoliciesPage(opts: SlaPoliciesPageOptions) {
  const { frame, policies } = opts;
  return consolePage(
    'SLA policies',
    SECTION,
    frame,
    <>
      <Messages notice={opts.notice} error={opts.error} />
      <p class="muted">
        A request gets the first policy that matches it, lower position first; with none, the fallback
        targets. A change applies to requests created afterwards and to open requests when their policy is
        picked again.
      </p>
      {policies !== null && (
        <CreatePanel id="create-sla-policy" label="Create a policy" open={opts.form !== undefined}>
          <form method="post" action={SECTION}>
            <CsrfField csrf={frame.csrf} />
            <label for="create-policy">Policy (JSON)</label>
            <textarea
              id="create-policy"
              name="policy"
              rows={22}
              required
              spellcheck={false}
              aria-describedby="create-policy-hint"
              value={opts.form ?? EXAMPLE_POLICY}
            />
            <p class="hint" id="create-policy-hint">
              The body of <code>POST /v1/sla-policies</code> (docs/api-guide.md): targets in business minutes
              per priority, the business-hours calendar, the statuses that pause the clocks and which requests
              it applies to.
            </p>
            <button type="submit">Create policy</button>
          </form>
        </CreatePanel>
      )}
      <section id="list" aria-label="SLA policies">
        {policies !== null && <PolicyList policies={policies} />}
      </section>
    </>,
  );
}
