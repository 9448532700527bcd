import type { Priority, RequestStatus, Role } from '@support-desk/contracts';

/**
 * The demo data set of `deskctl seed --demo`: who exists, which groups, and for request number
 * `i` of a run exactly which steps bring it to its final state. Everything is derived from the run
 * id and `i` (no Math.random), so a resumed run replays the same plan and skips the done steps.
 */

export const DEFAULT_RUN_ID = 'demo';
export const RUN_ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,31}$/;
export const EMAIL_DOMAIN = 'demo.support-desk.local';

export const runTag = (runId: string) => `demo:${runId}`;
export const demoEmail = (handle: string, runId: string) => `${handle}+${runId}@${EMAIL_DOMAIN}`;
/** The default run keeps the plain names; other runs suffix theirs so sets never collide. */
export const demoGroupName = (name: string, runId: string) =>
  runId === DEFAULT_RUN_ID ? name : `${name} (${runId})`;

export type GroupKey = 'tier1' | 'tier2' | 'billing' | 'network';

export const DEMO_GROUPS: { key: GroupKey; name: string; description: string }[] = [
  { key: 'tier1', name: 'Tier 1', description: 'First line: triage, accounts, how-to questions' },
  { key: 'tier2', name: 'Tier 2', description: 'Escalations that need an engineer' },
  { key: 'billing', name: 'Billing', description: 'Invoices, refunds, plan changes' },
  { key: 'network', name: 'Network', description: 'VPN, Wi-Fi, DNS and connectivity' },
];

export interface DemoUser {
  handle: string;
  name: string;
  role: Role;
  isVip: boolean;
  groups: GroupKey[];
  /** Calls the API during seeding (gets a temporary key). */
  acts: boolean;
}

const u = (
  handle: string,
  name: string,
  role: Role,
  groups: GroupKey[] = [],
  isVip = false,
  acts = true,
) => ({
  handle,
  name,
  role,
  isVip,
  groups,
  acts,
});

/**
 * Requesters have role `agent`: filing a request needs `requests:write`, which viewers never
 * have (ROLE_SCOPES). Viewers are read-only accounts (dashboards, auditors) and never act.
 */
export const DEMO_USERS: DemoUser[] = [
  u('admin1', 'Alex Morgan', 'admin'),
  u('admin2', 'Sam Okafor', 'admin', [], false, false),
  u('agent1', 'Priya Patel', 'agent', ['tier1']),
  u('agent2', 'Tom Becker', 'agent', ['tier1']),
  u('agent3', 'Lucia Romero', 'agent', ['tier1', 'billing']),
  u('agent4', 'Kenji Sato', 'agent', ['tier2']),
  u('agent5', 'Fatima Haddad', 'agent', ['tier2', 'network']),
  u('agent6', 'Oliver Novak', 'agent', ['billing', 'network']),
  u('requester1', 'Dana Reyes', 'agent', [], true),
  u('requester2', 'Victor Lindqvist', 'agent', [], true),
  u('requester3', 'Grace Kim', 'agent'),
  u('requester4', 'Mateo Silva', 'agent'),
  u('viewer1', 'Helen Brooks', 'viewer', [], true, false),
  u('viewer2', 'Ivan Petrov', 'viewer', [], false, false),
  u('viewer3', 'Nora Walsh', 'viewer', [], false, false),
];

const REQUESTERS = ['requester1', 'requester2', 'requester3', 'requester4', 'requester1', 'admin1'];

interface Topic {
  title: string;
  description: string;
  category: string;
  group: GroupKey;
  tags: string[];
}

const TOPICS: Topic[] = [
  {
    title: 'VPN disconnects every hour',
    description: 'The VPN client drops the tunnel roughly every 60 minutes and I have to sign in again.',
    category: 'network',
    group: 'network',
    tags: ['vpn'],
  },
  {
    title: 'Cannot reach the staging database',
    description: 'Connections to the staging database time out from the office network since this morning.',
    category: 'network',
    group: 'network',
    tags: ['dns', 'staging'],
  },
  {
    title: 'Office Wi-Fi very slow on floor 3',
    description: 'Speed tests on floor 3 show under 2 Mbit/s; other floors are fine.',
    category: 'network',
    group: 'network',
    tags: ['wifi'],
  },
  {
    title: 'Invoice shows the wrong VAT number',
    description: 'Our last invoice carries an old VAT number; finance needs a corrected copy.',
    category: 'billing',
    group: 'billing',
    tags: ['invoice'],
  },
  {
    title: 'Charged twice for the annual plan',
    description: 'The card statement shows two charges for the annual renewal on the same day.',
    category: 'billing',
    group: 'billing',
    tags: ['refund'],
  },
  {
    title: 'Upgrade our plan to Professional',
    description: 'Please move our workspace to the Professional plan from next month.',
    category: 'billing',
    group: 'billing',
    tags: ['plan'],
  },
  {
    title: 'Password reset email never arrives',
    description: 'I requested a password reset three times; nothing arrives, not even in spam.',
    category: 'account',
    group: 'tier1',
    tags: ['login'],
  },
  {
    title: 'New starter needs an account',
    description: 'A new colleague starts on Monday and needs an account with access to the shared drive.',
    category: 'account',
    group: 'tier1',
    tags: ['onboarding'],
  },
  {
    title: 'How do I export my reports to CSV?',
    description: 'I cannot find the export button on the reports page any more.',
    category: 'how-to',
    group: 'tier1',
    tags: ['reports'],
  },
  {
    title: 'Printer on floor 2 jams constantly',
    description: 'The shared printer jams on every second page; the paper tray looks fine.',
    category: 'hardware',
    group: 'tier1',
    tags: ['printer'],
  },
  {
    title: 'Laptop will not boot after update',
    description: "After last night's update the laptop shows a black screen with a blinking cursor.",
    category: 'hardware',
    group: 'tier2',
    tags: ['laptop', 'update'],
  },
  {
    title: 'API returns 500 on bulk import',
    description: 'Bulk import of 2,000 contacts fails with a server error at around row 1,200.',
    category: 'bug',
    group: 'tier2',
    tags: ['api', 'import'],
  },
  {
    title: 'Dashboard charts are empty',
    description: 'Since yesterday every chart on the main dashboard is empty although the data is there.',
    category: 'bug',
    group: 'tier2',
    tags: ['dashboard'],
  },
  {
    title: 'Single sign-on loops back to the login page',
    description: 'Signing in with SSO redirects back to the login page without an error.',
    category: 'account',
    group: 'tier2',
    tags: ['sso', 'login'],
  },
  {
    title: 'Mailbox is full',
    description: 'Outlook says my mailbox is full; I cannot send or receive mail.',
    category: 'account',
    group: 'tier1',
    tags: ['email'],
  },
  {
    title: 'Request for a second monitor',
    description: 'Could I get a second monitor for my desk? I work with large spreadsheets.',
    category: 'hardware',
    group: 'tier1',
    tags: ['equipment'],
  },
];

const REPLIES = [
  'Thanks for the report, I am looking into it now.',
  'I can reproduce this on our side; working on a fix.',
  'Could you tell me when this started and whether anything changed before?',
  'I have escalated this internally and will update you within the day.',
];
const FOLLOW_UPS = [
  'It happened again just now, in case that helps.',
  'Any news on this? It is blocking part of the team.',
  'Attaching what I see on my screen.',
];
const NOTES = [
  'Checked the logs: matches the incident from last week.',
  'Customer is on the VIP list, keep them posted.',
  'Needs a change on the vendor side; ticket opened with them.',
  'Workaround shared; root cause still open.',
];
const RESOLUTIONS = [
  'Configuration corrected and verified with the requester.',
  'Replaced the faulty component; working again.',
  'Credit note issued and the invoice re-sent.',
  'Fixed in the latest release; confirmed by the requester.',
];

/** Final statuses cycle with `i` and priorities with `i / 6`: any 24 consecutive requests cover every pair. */
export const STATUS_CYCLE: RequestStatus[] = [
  'open',
  'assigned',
  'in_progress',
  'pending',
  'resolved',
  'closed',
];
export const PRIORITY_CYCLE: Priority[] = ['critical', 'high', 'medium', 'low'];
export const plannedStatus = (i: number) => STATUS_CYCLE[i % STATUS_CYCLE.length];
export const plannedPriority = (i: number) =>
  PRIORITY_CYCLE[Math.floor(i / STATUS_CYCLE.length) % PRIORITY_CYCLE.length];

/** Small deterministic PRNG (mulberry32) seeded from the run id and request number. */
function rng(seed: string): () => number {
  let h = 2166136261;
  for (const ch of seed) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
  let a = h >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

export type AttachmentKind = 'txt' | 'png' | 'pdf';

/** One API call of the plan; `as` is the acting user's handle. */
export type Step =
  | { kind: 'create'; as: string; body: Record<string, unknown> }
  | { kind: 'patch'; as: string; body: Record<string, unknown>; statusMove: boolean }
  | { kind: 'comment'; as: string; content: string; isInternal: boolean }
  | { kind: 'attach'; as: string; file: AttachmentKind };

export interface RequestPlan {
  index: number;
  status: RequestStatus;
  priority: Priority;
  title: string;
  steps: Step[];
}

export function planRequest(runId: string, i: number): RequestPlan {
  const r = rng(`${runId}#${i}`);
  const pick = <T>(list: readonly T[]) => list[Math.floor(r() * list.length)];
  const status = plannedStatus(i);
  const priority = plannedPriority(i);
  const topic = TOPICS[(i * 7 + Math.floor(r() * TOPICS.length)) % TOPICS.length];
  const requester = REQUESTERS[i % REQUESTERS.length];
  const members = DEMO_USERS.filter((x) => x.groups.includes(topic.group) && x.handle !== requester);
  const assignee = pick(members).handle;
  // Some requests start at another priority and are re-prioritised later (priority_changed events).
  const escalated = i % 7 === 3 && priority !== 'low';
  const steps: Step[] = [];
  const assignedAtCreation = status !== 'open' && r() < 0.4;
  steps.push({
    kind: 'create',
    as: requester,
    body: {
      title: topic.title,
      description: topic.description,
      priority: escalated ? 'low' : priority,
      category: topic.category,
      tags: [runTag(runId), ...topic.tags],
      ...(status !== 'open' || r() < 0.5 ? { assignedGroup: groupRef(topic.group) } : {}),
      ...(assignedAtCreation ? { assignedTo: userRef(assignee) } : {}),
    },
  });
  const comment = (as: string, content: string, isInternal = false) =>
    steps.push({ kind: 'comment', as, content, isInternal });
  const move = (as: string, body: Record<string, unknown>) =>
    steps.push({ kind: 'patch', as, body, statusMove: 'status' in body || 'assignedTo' in body });

  if (i % 3 === 0)
    steps.push({ kind: 'attach', as: requester, file: (['txt', 'png', 'pdf'] as const)[(i / 3) % 3] });
  if (status === 'open') {
    if (r() < 0.5) comment(requester, pick(FOLLOW_UPS));
    if (escalated) move('admin1', { priority });
    return { index: i, status, priority, title: topic.title, steps };
  }
  if (!assignedAtCreation) move('admin1', { assignedTo: userRef(assignee) });
  if (escalated) move(assignee, { priority });
  if (status === 'assigned') {
    if (r() < 0.5) comment(assignee, pick(NOTES), true);
    return { index: i, status, priority, title: topic.title, steps };
  }
  move(assignee, { status: 'in_progress' });
  comment(assignee, pick(REPLIES));
  if (r() < 0.5) comment(requester, pick(FOLLOW_UPS));
  if (status === 'in_progress') return { index: i, status, priority, title: topic.title, steps };
  comment(assignee, pick(NOTES), true);
  if (status === 'pending') {
    comment(assignee, 'Waiting for your answer before we can continue.');
    move(assignee, { status: 'pending' });
    return { index: i, status, priority, title: topic.title, steps };
  }
  move(assignee, { status: 'resolved', resolution: pick(RESOLUTIONS) });
  if (status === 'closed') move(i % 2 === 0 ? 'admin1' : assignee, { status: 'closed' });
  return { index: i, status, priority, title: topic.title, steps };
}

/** Placeholders in a plan, replaced by real ids when a step runs. */
export const userRef = (handle: string) => `@user:${handle}`;
export const groupRef = (key: GroupKey) => `@group:${key}`;
