import { type Static, Type } from 'typebox';
import { Ok } from './envelope.js';
import { IdSchema } from './ids.js';
import { DateTimeString, DescribedPattern, StringEnum } from './schema.js';
import { PRIORITIES, REQUEST_STATUSES } from './requests.js';
import type { RouteSchemaMap } from './routes.js';

/** Documented input limits of the SLA policies API (services/requests/README.md). */
export const SLA_POLICY_LIMITS = {
  policies: 100,
  name: 64,
  description: 500,
  windows: 28,
  holidays: 400,
  groups: 50,
  /** A target of at most a year of business minutes. */
  targetMinutes: 525_600,
  position: 10_000,
} as const;
const L = SLA_POLICY_LIMITS;

/** The IANA time zones a calendar may name: the runtime's canonical ones, and UTC. */
export const TIME_ZONES: readonly string[] = [
  'UTC',
  ...Intl.supportedValuesOf('timeZone').filter((z) => z !== 'UTC'),
];

export const WEEKDAYS = [
  'monday',
  'tuesday',
  'wednesday',
  'thursday',
  'friday',
  'saturday',
  'sunday',
] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** Statuses that may pause the clocks: resolved and closed always stop the resolution clock. */
export const PAUSABLE_STATUSES = REQUEST_STATUSES.filter((s) => s !== 'resolved' && s !== 'closed');

const TimeOfDay = (what: string) =>
  Type.String({
    pattern: DescribedPattern(
      '^(?:(?:[01]\\d|2[0-3]):[0-5]\\d|24:00)$',
      'must be a time of day HH:MM from 00:00 to 24:00',
    ),
    description: what,
  });

const BusinessWindow = Type.Object(
  {
    days: Type.Array(StringEnum(WEEKDAYS), { minItems: 1, maxItems: 7, uniqueItems: true }),
    from: TimeOfDay('Local start of the window on each of `days`.'),
    to: TimeOfDay(
      'Local end of the window; at or before `from` it ends on the next day (a night shift across ' +
        'midnight; equal to `from`: 24 hours).',
    ),
  },
  { additionalProperties: false },
);
export type BusinessWindow = Static<typeof BusinessWindow>;

const HolidayDate = Type.String({
  pattern: DescribedPattern(
    '^\\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\\d|3[01])$',
    'must be a date YYYY-MM-DD',
  ),
});

export const BusinessCalendar = Type.Object(
  {
    timeZone: StringEnum(TIME_ZONES, {
      description:
        "An IANA time zone (`Europe/Berlin`, `America/New_York`, `UTC`) of the runtime's time-zone data: " +
        'hours and holidays are local to it.',
    }),
    hours: Type.Array(BusinessWindow, {
      minItems: 1,
      maxItems: L.windows,
      description:
        'The weekly business hours. Around the clock is `[{"days": [all seven], "from": "00:00", "to": "24:00"}]`.',
    }),
    holidays: Type.Array(HolidayDate, {
      maxItems: L.holidays,
      uniqueItems: true,
      description: 'Local dates on which no business time passes (the whole day, whatever `hours` say).',
    }),
  },
  { additionalProperties: false },
);
export type BusinessCalendar = Static<typeof BusinessCalendar>;

const TargetMinutes = Type.Integer({
  minimum: 1,
  maximum: L.targetMinutes,
  description: 'Business minutes.',
});
const PriorityTargets = Type.Object(
  { firstResponseMinutes: TargetMinutes, resolutionMinutes: TargetMinutes },
  { additionalProperties: false },
);
export const SlaTargets = Type.Object(
  Object.fromEntries(PRIORITIES.map((p) => [p, PriorityTargets])) as Record<
    (typeof PRIORITIES)[number],
    typeof PriorityTargets
  >,
  { additionalProperties: false },
);
export type SlaTargets = Static<typeof SlaTargets>;

export const SlaPolicyMatch = Type.Object(
  {
    priorities: Type.Optional(
      Type.Array(StringEnum(PRIORITIES), { minItems: 1, maxItems: PRIORITIES.length, uniqueItems: true }),
    ),
    groups: Type.Optional(
      Type.Array(IdSchema('group'), {
        minItems: 1,
        maxItems: L.groups,
        uniqueItems: true,
        description: 'Assigned group is one of these.',
      }),
    ),
    vip: Type.Optional(Type.Boolean({ description: 'The requester is (true) or is not (false) a VIP.' })),
  },
  {
    additionalProperties: false,
    description:
      'Which requests the policy applies to: every condition given must hold (none given: every request). ' +
      'Policies are tried in `position` order; the first that matches applies.',
  },
);
export type SlaPolicyMatch = Static<typeof SlaPolicyMatch>;

const PauseStatuses = Type.Array(StringEnum(PAUSABLE_STATUSES), {
  maxItems: PAUSABLE_STATUSES.length,
  uniqueItems: true,
  description:
    'Statuses in which both clocks stand still (e.g. `pending`: waiting on the customer). Resolved and ' +
    'closed always stop the resolution clock.',
});

const PolicyName = Type.String({
  pattern: DescribedPattern(
    `^[a-z0-9][a-z0-9_-]{0,${L.name - 1}}$`,
    `must be 1–${L.name} lower-case letters, digits, '-' or '_', starting with a letter or digit`,
  ),
  description: "Unique among the policies; a request's `sla.tier` is `<name>:<priority>`.",
});
const Position = Type.Integer({
  minimum: 0,
  maximum: L.position,
  description: 'Where the policy is tried: lower first (ties: older first).',
});

export const SlaPolicy = Type.Object(
  {
    id: IdSchema('slaPolicy'),
    name: Type.String(),
    description: Type.String(),
    position: Type.Integer(),
    match: SlaPolicyMatch,
    targets: SlaTargets,
    calendar: BusinessCalendar,
    pauseStatuses: Type.Array(Type.String()),
    createdAt: DateTimeString(),
    updatedAt: DateTimeString(),
  },
  { additionalProperties: false },
);
export type SlaPolicy = Static<typeof SlaPolicy>;

export const CreateSlaPolicyBody = Type.Object(
  {
    name: PolicyName,
    description: Type.Optional(Type.String({ maxLength: L.description })),
    position: Type.Optional(Position),
    match: Type.Optional(SlaPolicyMatch),
    targets: SlaTargets,
    calendar: Type.Optional(BusinessCalendar),
    pauseStatuses: Type.Optional(PauseStatuses),
  },
  { additionalProperties: false },
);
export type CreateSlaPolicyBody = Static<typeof CreateSlaPolicyBody>;

export const UpdateSlaPolicyBody = Type.Object(
  {
    name: Type.Optional(PolicyName),
    description: Type.Optional(Type.String({ maxLength: L.description })),
    position: Type.Optional(Position),
    match: Type.Optional(SlaPolicyMatch),
    targets: Type.Optional(SlaTargets),
    calendar: Type.Optional(BusinessCalendar),
    pauseStatuses: Type.Optional(PauseStatuses),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateSlaPolicyBody = Static<typeof UpdateSlaPolicyBody>;

const FallbackTargets = Type.Object(
  { standard: SlaTargets, vip: SlaTargets },
  {
    additionalProperties: false,
    description:
      "What applies when no policy matches: the service's `SLA_POLICY` table (VIP requesters get the `vip` row), " +
      'around the clock in UTC, no pause statuses; `sla.policy` is then null.',
  },
);

export const SlaPolicyList = Type.Object(
  {
    policies: Type.Array(SlaPolicy, { description: 'In the order they are tried.' }),
    fallback: FallbackTargets,
  },
  { additionalProperties: false },
);
export type SlaPolicyList = Static<typeof SlaPolicyList>;

const SlaPolicyParams = Type.Object({ id: IdSchema('slaPolicy') }, { additionalProperties: false });

const APPLIES =
  'A change applies to requests created afterwards and to open requests when their policy is picked again ' +
  '(their priority or group changes); the clocks of open requests otherwise keep the policy they were given.';

export const slaPoliciesRouteSchemas = {
  'GET /v1/sla-policies': {
    description: `Every SLA policy in the order they are tried, and the fallback. ${APPLIES}`,
    response: { 200: Ok(SlaPolicyList) },
  },
  'POST /v1/sla-policies': {
    description:
      `Creates a policy (admin): targets per priority in business minutes, a business-hours calendar ` +
      `(default: around the clock in UTC), the statuses that pause the clocks (default: \`pending\`) and ` +
      `the match. Emits \`system.config_changed\`. At most ${L.policies} policies. ${APPLIES}`,
    body: CreateSlaPolicyBody,
    location: '/v1/sla-policies/:id',
    response: { 201: Ok(SlaPolicy) },
  },
  'GET /v1/sla-policies/:id': {
    description: 'One SLA policy.',
    params: SlaPolicyParams,
    response: { 200: Ok(SlaPolicy) },
  },
  'PATCH /v1/sla-policies/:id': {
    description: `Changes the fields given (admin; each replaces the field whole). Emits \`system.config_changed\`. ${APPLIES}`,
    params: SlaPolicyParams,
    body: UpdateSlaPolicyBody,
    response: { 200: Ok(SlaPolicy) },
  },
  'DELETE /v1/sla-policies/:id': {
    description: `Deletes a policy (admin). Emits \`system.config_changed\`. ${APPLIES}`,
    params: SlaPolicyParams,
    response: {
      200: Ok(
        Type.Object(
          { id: IdSchema('slaPolicy'), deleted: Type.Literal(true) },
          { additionalProperties: false },
        ),
      ),
    },
  },
} satisfies RouteSchemaMap;
