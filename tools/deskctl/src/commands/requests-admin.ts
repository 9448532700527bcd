import type { CommandSpec, Options } from '../command.js';
import { listCommand } from '../list-command.js';

const POLICY_ID = [{ name: 'ID', description: 'the SLA policy (slp_…)', required: true }];

/**
 * A policy from flags and/or a JSON file: the file is the body (`POST /v1/sla-policies`'s, or
 * PATCH's for update), and each flag given sets its field on top of it (run/sla-policies.ts).
 */
const POLICY_OPTIONS: Options = {
  file: {
    type: 'string',
    value: 'FILE',
    description: 'a JSON file holding the policy (the API body); flags given override its fields',
  },
  name: { type: 'string', value: 'NAME', description: 'its name: lower-case letters, digits, - or _' },
  description: { type: 'string', value: 'TEXT', description: 'what it is for' },
  position: { type: 'string', value: 'N', description: 'where it is tried: lower first (default 0)' },
  targets: {
    type: 'string',
    value: 'TARGETS',
    description:
      'business minutes to first response/resolution per priority: critical=15/60,high=60/240,medium=240/1440,low=480/2880',
  },
  'time-zone': {
    type: 'string',
    value: 'ZONE',
    description: 'the calendar: business hours in this IANA zone (Europe/Berlin); the hours from --file',
  },
  priorities: {
    type: 'string',
    value: 'LIST',
    description: 'match: requests of these priorities (comma-separated)',
  },
  groups: {
    type: 'string',
    value: 'IDS',
    description: 'match: requests assigned to these groups (grp_…, comma-separated)',
  },
  vip: {
    type: 'string',
    value: 'yes|no',
    description: 'match: requesters who are (yes) or are not (no) VIPs',
  },
  'pause-statuses': {
    type: 'string',
    value: 'LIST',
    description: 'statuses that pause the clocks, comma-separated (default pending; "" for none)',
  },
};

/**
 * `deskctl sla-policies …`, `deskctl requests deleted|restore`, `deskctl jobs show`: asked of the
 * requests service through its admin RPC (run/sla-policies.ts, run/trash.ts).
 */
export const requestsAdminCommands: Record<string, CommandSpec> = {
  'sla-policies list': listCommand({
    description: 'the SLA policies in the order they are tried (the fallback applies when none matches)',
    examples: ['sla-policies list', 'sla-policies list --json'],
    noun: ['SLA policy', 'SLA policies'],
  }),
  'sla-policies show': {
    description: 'one SLA policy: its match, targets, calendar and pause statuses',
    options: {},
    args: POLICY_ID,
    examples: ['sla-policies show slp_01J...'],
  },
  'sla-policies create': {
    description:
      'create an SLA policy from flags and/or a JSON file (--targets is required one way or the other)',
    options: POLICY_OPTIONS,
    examples: [
      'sla-policies create --name vip --vip yes --targets critical=15/60,high=30/120,medium=60/480,low=240/960',
      'sla-policies create --file office-hours.json',
      'sla-policies create --file office-hours.json --name office-emea --time-zone Europe/Berlin',
    ],
  },
  'sla-policies update': {
    description: 'change an SLA policy: the fields given by flags and/or a JSON file',
    options: POLICY_OPTIONS,
    args: POLICY_ID,
    examples: [
      'sla-policies update slp_01J... --position 2',
      'sla-policies update slp_01J... --file changes.json',
    ],
  },
  'sla-policies delete': {
    description: 'delete an SLA policy: requests created afterwards no longer get it',
    options: {},
    args: POLICY_ID,
    examples: ['sla-policies delete slp_01J... --yes'],
    confirm: (_v, pos) => `SLA policy ${pos[0]} will be deleted`,
  },
  'requests deleted': listCommand({
    description: 'the trash: deleted requests, newest deletion first, and when each is purged for good',
    examples: ['requests deleted', 'requests deleted --all --json'],
    noun: ['deleted request', 'deleted requests'],
  }),
  'requests restore': {
    description: 'restore a deleted request from the trash, with its comments and attachments',
    options: {},
    args: [{ name: 'ID', description: 'the request (req_…)', required: true }],
    examples: ['requests restore req_01J...'],
  },
  'jobs show': {
    description: "a bulk job's progress and a page of its per-item results, in item order",
    options: {
      page: { type: 'string', value: 'N', description: 'the page of results (default 1)' },
      limit: { type: 'string', value: 'N', description: 'results per page (1-100, default 20)' },
    },
    args: [{ name: 'ID', description: 'the job (job_…)', required: true }],
    examples: ['jobs show job_01J...', 'jobs show job_01J... --page 2 --limit 100 --json'],
  },
};
