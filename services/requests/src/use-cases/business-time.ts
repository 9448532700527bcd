import type {} from 'temporal-spec/global';
import { type BusinessCalendar, WEEKDAYS } from '@support-desk/contracts';
import { ConfigError } from '@support-desk/platform/core';

/**
 * Business-time arithmetic on a calendar of weekly hours in an IANA time zone less holidays, on
 * the runtime's own Temporal (Node 26 ships it; the time-zone rules are the runtime's ICU data):
 * local times become instants with Temporal's "compatible" disambiguation, so a window that starts
 * in a spring-forward gap starts at the first valid moment after it, and business time is elapsed
 * real time inside the windows (a 01:00–04:00 window is 2 h on the night the clocks go forward,
 * 4 h on the night they go back).
 */

/** Refuses to start on a runtime without Temporal (the pinned Node 26 has it). */
export function requireTemporal(): void {
  if (typeof globalThis.Temporal === 'undefined') {
    throw new ConfigError('This runtime has no Temporal: the SLA calendars need Node 26 or later');
  }
}

/** Every moment counts: the fallback's calendar, and what a policy gets when it gives none. */
export const AROUND_THE_CLOCK_UTC: BusinessCalendar = {
  timeZone: 'UTC',
  hours: [{ days: [...WEEKDAYS], from: '00:00', to: '24:00' }],
  holidays: [],
};

const DAY_MS = 86_400_000;
/**
 * How far a walk goes (days): a target further away than this (a year of business minutes on a
 * calendar of one short window a week) is taken as reached at this horizon, so no walk is endless.
 */
const HORIZON_DAYS = 10 * 366 + 400;

/** Whether every moment is business time: plain arithmetic then, no walk. */
function isAroundTheClock(cal: BusinessCalendar): boolean {
  return (
    cal.holidays.length === 0 &&
    cal.hours.some((w) => w.days.length === 7 && w.from === '00:00' && w.to === '24:00')
  );
}

const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** The instant of a local date and time of day ('24:00' is the next day's midnight). */
function instantAt(date: Temporal.PlainDate, hhmm: string, zone: string): number {
  const day = hhmm === '24:00' ? date.add({ days: 1 }) : date;
  const time = hhmm === '24:00' ? '00:00' : hhmm;
  return day
    .toPlainDateTime(Temporal.PlainTime.from(time))
    .toZonedDateTime(zone, { disambiguation: 'compatible' }).epochMilliseconds;
}

const startOfDay = (date: Temporal.PlainDate, zone: string) =>
  date.toZonedDateTime({ timeZone: zone }).epochMilliseconds;

type Interval = [number, number];

/**
 * The business intervals of the windows that start on local `date`, less the parts that fall on a
 * holiday (a window across midnight is split there: each part belongs to its own local date).
 */
function windowsOfDay(cal: BusinessCalendar, holidays: Set<string>, date: Temporal.PlainDate): Interval[] {
  const weekday = WEEKDAYS[date.dayOfWeek - 1]!;
  const out: Interval[] = [];
  const next = date.add({ days: 1 });
  const midnight = startOfDay(next, cal.timeZone);
  for (const w of cal.hours) {
    if (!w.days.includes(weekday)) continue;
    const start = instantAt(date, w.from, cal.timeZone);
    const end =
      minutesOf(w.to) > minutesOf(w.from)
        ? instantAt(date, w.to, cal.timeZone)
        : instantAt(next, w.to, cal.timeZone);
    if (end <= start) continue;
    const todayOff = holidays.has(date.toString());
    const tomorrowOff = holidays.has(next.toString());
    if (end <= midnight) {
      if (!todayOff) out.push([start, end]);
      continue;
    }
    if (!todayOff && start < midnight) out.push([start, midnight]);
    if (!tomorrowOff) out.push([Math.max(start, midnight), end]);
  }
  return out.sort((a, b) => a[0] - b[0]);
}

/**
 * The calendar's business intervals from `fromMs` on, merged and in order, clipped to start at
 * `fromMs`; at most HORIZON_DAYS days of them.
 */
function* businessIntervals(cal: BusinessCalendar, fromMs: number): Generator<Interval> {
  const holidays = new Set(cal.holidays);
  // The day before too: its window may run across midnight into the first day.
  let date = Temporal.Instant.fromEpochMilliseconds(fromMs)
    .toZonedDateTimeISO(cal.timeZone)
    .toPlainDate()
    .subtract({ days: 1 });
  let current: Interval | null = null;
  for (let day = 0; day < HORIZON_DAYS; day++, date = date.add({ days: 1 })) {
    for (const [start, end] of windowsOfDay(cal, holidays, date)) {
      if (end <= fromMs) continue;
      const clipped: Interval = [Math.max(start, fromMs), end];
      if (current && clipped[0] <= current[1]) {
        current[1] = Math.max(current[1], clipped[1]);
        continue;
      }
      if (current) yield current;
      current = clipped;
    }
  }
  if (current) yield current;
}

/** The horizon's end from `fromMs`: what a walk answers when it runs out of calendar. */
const horizonFrom = (fromMs: number) => fromMs + HORIZON_DAYS * DAY_MS;

/**
 * The instants at which `amounts` (ms, ascending) of business time have passed since `fromMs`:
 * one walk for all of them (a target and its warning threshold). An amount ≤ 0 is `fromMs`.
 */
export function addBusinessTime(cal: BusinessCalendar, fromMs: number, amounts: number[]): number[] {
  if (isAroundTheClock(cal)) return amounts.map((ms) => fromMs + Math.max(0, ms));
  const out = amounts.map(() => horizonFrom(fromMs));
  let passed = 0;
  let next = 0;
  while (next < amounts.length && amounts[next]! <= 0) out[next++] = fromMs;
  if (next === amounts.length) return out;
  for (const [start, end] of businessIntervals(cal, fromMs)) {
    while (next < amounts.length && passed + (end - start) >= amounts[next]!) {
      out[next] = start + (amounts[next]! - passed);
      next++;
    }
    if (next === amounts.length) break;
    passed += end - start;
  }
  return out;
}

/** Business time (ms) between two instants; 0 when `toMs` is not after `fromMs`. */
export function businessTimeBetween(cal: BusinessCalendar, fromMs: number, toMs: number): number {
  if (toMs <= fromMs) return 0;
  if (isAroundTheClock(cal)) return toMs - fromMs;
  let total = 0;
  for (const [start, end] of businessIntervals(cal, fromMs)) {
    if (start >= toMs) break;
    total += Math.min(end, toMs) - start;
  }
  return total;
}
