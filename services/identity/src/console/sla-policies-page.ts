import { PRIORITIES, type SlaPolicy } from '@support-desk/contracts';
import { alertBox, esc } from '../oauth/page-layout.js';
import { consolePage, csrfField, dateCell, type Frame, tags } from './frame.js';
import { createPanel } from './lists.js';

const SECTION = '/settings/sla-policies';

/** What the create form starts with: a complete policy to edit (the API body of `POST /v1/sla-policies`). */
export const EXAMPLE_POLICY = JSON.stringify(
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

const matchText = (p: SlaPolicy) => {
  const m = p.match;
  const parts = [
    ...(m.priorities ? [`priority ${m.priorities.join(', ')}`] : []),
    ...(m.groups ? [`group ${m.groups.join(', ')}`] : []),
    ...(m.vip !== undefined ? [m.vip ? 'VIP requester' : 'not a VIP requester'] : []),
  ];
  return parts.length ? esc(parts.join('; ')) : '<span class="muted">every request</span>';
};

const targetsText = (p: SlaPolicy) =>
  PRIORITIES.map(
    (k) => `${esc(k)}: ${p.targets[k].firstResponseMinutes} / ${p.targets[k].resolutionMinutes} min`,
  ).join('<br>');

function policyRow(p: SlaPolicy): string {
  return `<tr data-policy-id="${esc(p.id)}"><th scope="row" class="wrap">${esc(p.name)}<br><span class="muted">${esc(p.id)}</span></th>
<td>${p.position}</td><td class="wrap">${matchText(p)}</td><td>${targetsText(p)}</td>
<td>${esc(p.calendar.timeZone)}</td><td>${tags(p.pauseStatuses)}</td><td>${dateCell(p.updatedAt)}</td>
<td><a class="button danger" href="${SECTION}/delete?id=${encodeURIComponent(p.id)}" aria-label="Delete ${esc(p.name)}">Delete…</a></td></tr>`;
}

/** The create form (a JSON text area) at the top, then the policies in the order they are tried. */
export function slaPoliciesPage(opts: SlaPoliciesPageOptions): string {
  const { frame, policies } = opts;
  const list =
    policies === null
      ? ''
      : policies.length === 0
        ? '<p class="muted" id="no-rows">No SLA policies yet: every request gets the fallback targets.</p>'
        : `<div class="table-wrap"><table><caption>${policies.length} SLA ${policies.length === 1 ? 'policy' : 'policies'}, in the order they are tried</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Position</th><th scope="col">Applies to</th><th scope="col">First response / resolution</th><th scope="col">Time zone</th><th scope="col">Pauses on</th><th scope="col">Updated</th><th scope="col"><span class="muted">Action</span></th></tr></thead>
<tbody>${policies.map(policyRow).join('')}</tbody></table></div>`;
  const create =
    policies === null
      ? ''
      : createPanel(
          'create-sla-policy',
          'Create a policy',
          `<form method="post" action="${SECTION}">${csrfField(frame.csrf)}
<label for="create-policy">Policy (JSON)</label><textarea id="create-policy" name="policy" rows="22" required spellcheck="false" aria-describedby="create-policy-hint">${esc(opts.form ?? EXAMPLE_POLICY)}</textarea>
<p class="hint" id="create-policy-hint">The body of <code>POST /v1/sla-policies</code> (docs/api-guide.md): targets in business minutes per priority, the business-hours calendar, the statuses that pause the clocks and which requests it applies to.</p>
<button type="submit">Create policy</button></form>`,
          opts.form !== undefined,
        );
  return consolePage(
    'SLA policies',
    SECTION,
    frame,
    `${alertBox(opts.notice, 'success')}${alertBox(opts.error)}
<p class="muted">A request gets the first policy that matches it, lower position first; with none, the fallback targets. A change applies to requests created afterwards and to open requests when their policy is picked again.</p>
${create}<section id="list" aria-label="SLA policies">${list}</section>`,
  );
}
