// Business-time arithmetic at its edges: weekends, holidays, windows across midnight, the nights
// the clocks change (a window in the spring-forward gap, the doubled hour in autumn), and the
// walk and the measure agreeing with each other.
import { type BusinessCalendar, WEEKDAYS } from '@support-desk/contracts';
import t from 'tap';
import {
  addBusinessTime,
  AROUND_THE_CLOCK_UTC,
  businessTimeBetween,
} from '../src/use-cases/business-time.js';

const H = 3_600_000;
const M = 60_000;
const ms = (iso: string) => Date.parse(iso);
const iso = (n: number) => new Date(n).toISOString();
const WORKDAYS = WEEKDAYS.slice(0, 5);

const officeHours = (timeZone: string, holidays: string[] = []): BusinessCalendar => ({
  timeZone,
  hours: [{ days: [...WORKDAYS], from: '09:00', to: '17:00' }],
  holidays,
});
const add = (cal: BusinessCalendar, from: string, amount: number) =>
  iso(addBusinessTime(cal, ms(from), [amount])[0]!);

t.test('office hours: within a day, over the weekend, over a holiday', async (t) => {
  const berlin = officeHours('Europe/Berlin');
  // 2030-06-07 is a Friday; Berlin is UTC+2 in summer (09:00 local = 07:00Z).
  t.equal(add(berlin, '2030-06-07T08:00:00Z', H), '2030-06-07T09:00:00.000Z', 'inside the day');
  t.equal(
    add(berlin, '2030-06-07T13:00:00Z', 3 * H),
    '2030-06-10T08:00:00.000Z',
    'Friday 15:00 + 3 h: Monday 10:00',
  );
  t.equal(
    add(berlin, '2030-06-08T10:00:00Z', H),
    '2030-06-10T08:00:00.000Z',
    'from a Saturday: Monday 10:00',
  );
  t.equal(
    add(berlin, '2030-06-07T04:00:00Z', H),
    '2030-06-07T08:00:00.000Z',
    'before opening: counts from 09:00',
  );
  t.equal(
    add(berlin, '2030-06-07T15:00:00Z', 0),
    '2030-06-07T15:00:00.000Z',
    'nothing to add: the start itself',
  );
  const whitMonday = officeHours('Europe/Berlin', ['2030-06-10']);
  t.equal(
    add(whitMonday, '2030-06-07T13:00:00Z', 3 * H),
    '2030-06-11T08:00:00.000Z',
    'Monday a holiday: Tuesday 10:00',
  );
  t.equal(
    businessTimeBetween(whitMonday, ms('2030-06-07T13:00:00Z'), ms('2030-06-11T08:00:00Z')),
    3 * H,
    'and the measure agrees',
  );
  t.equal(
    businessTimeBetween(berlin, ms('2030-06-08T00:00:00Z'), ms('2030-06-09T23:00:00Z')),
    0,
    'a weekend: none',
  );
  t.equal(
    businessTimeBetween(berlin, ms('2030-06-09T00:00:00Z'), ms('2030-06-08T00:00:00Z')),
    0,
    'backwards: none',
  );
});

t.test('the nights the clocks change (Europe/Berlin, 2030-03-31 and 2030-10-27)', async (t) => {
  const nights: BusinessCalendar = {
    timeZone: 'Europe/Berlin',
    hours: [{ days: [...WEEKDAYS], from: '01:00', to: '04:00' }],
    holidays: [],
  };
  // Spring: 02:00 CET jumps to 03:00 CEST, so 01:00–04:00 is 00:00Z–02:00Z, two hours.
  t.equal(
    businessTimeBetween(nights, ms('2030-03-30T12:00:00Z'), ms('2030-03-31T12:00:00Z')),
    2 * H,
    'spring: 2 h',
  );
  t.equal(
    add(nights, '2030-03-31T00:00:00Z', 2 * H),
    '2030-03-31T02:00:00.000Z',
    'the window ends at 04:00 CEST',
  );
  t.equal(
    add(nights, '2030-03-31T00:00:00Z', 2 * H + 30 * M),
    '2030-03-31T23:30:00.000Z',
    'the rest from the next window (01:00 CEST = 23:00Z)',
  );
  // Autumn: 03:00 CEST goes back to 02:00 CET, so 01:00 CEST–04:00 CET is 23:00Z–03:00Z, four hours.
  t.equal(
    businessTimeBetween(nights, ms('2030-10-26T12:00:00Z'), ms('2030-10-27T12:00:00Z')),
    4 * H,
    'autumn: 4 h',
  );
  t.equal(
    add(nights, '2030-10-26T23:00:00Z', 3 * H + 30 * M),
    '2030-10-27T02:30:00.000Z',
    'through the doubled hour',
  );

  // A window that opens inside the spring gap (02:30 does not exist): it opens at 03:30 CEST.
  const gap: BusinessCalendar = {
    timeZone: 'Europe/Berlin',
    hours: [{ days: ['sunday'], from: '02:30', to: '05:00' }],
    holidays: [],
  };
  t.equal(
    businessTimeBetween(gap, ms('2030-03-30T00:00:00Z'), ms('2030-04-01T00:00:00Z')),
    90 * M,
    '03:30–05:00',
  );
  t.equal(add(gap, '2030-03-30T00:00:00Z', M), '2030-03-31T01:31:00.000Z', 'opening at 03:30 CEST = 01:30Z');

  // New York's office day across its own change (2030-03-10): 8 h either side of it.
  const ny = officeHours('America/New_York');
  t.equal(
    add(ny, '2030-03-08T20:00:00Z', 3 * H),
    '2030-03-11T14:00:00.000Z',
    'Friday 15:00 EST + 3 h: Monday 10:00 EDT',
  );
});

t.test('windows across midnight, and holidays cutting them', async (t) => {
  const nightShift: BusinessCalendar = {
    timeZone: 'UTC',
    hours: [{ days: [...WORKDAYS], from: '22:00', to: '06:00' }],
    holidays: [],
  };
  // 2030-06-07 is a Friday: its shift runs into Saturday 06:00; the next starts Monday 22:00.
  t.equal(add(nightShift, '2030-06-07T23:00:00Z', 8 * H), '2030-06-10T23:00:00.000Z', 'Friday 23:00 + 8 h');
  t.equal(
    add(nightShift, '2030-06-08T03:00:00Z', H),
    '2030-06-08T04:00:00.000Z',
    "inside Friday's shift on Saturday",
  );
  const saturdayOff = { ...nightShift, holidays: ['2030-06-08'] };
  t.equal(
    businessTimeBetween(saturdayOff, ms('2030-06-07T12:00:00Z'), ms('2030-06-09T12:00:00Z')),
    2 * H,
    'a holiday on the morning half: only 22:00–24:00 of Friday counts',
  );
  const fridayOff = { ...nightShift, holidays: ['2030-06-07'] };
  t.equal(
    businessTimeBetween(fridayOff, ms('2030-06-07T12:00:00Z'), ms('2030-06-09T12:00:00Z')),
    6 * H,
    'a holiday on the evening half: only 00:00–06:00 of Saturday counts',
  );
  // A window starting the day before the walk begins is found (it runs into the first day).
  t.equal(
    add(nightShift, '2030-06-11T02:00:00Z', 5 * H),
    '2030-06-11T23:00:00.000Z',
    "Tuesday 02:00 inside Monday's shift: 4 h left, 1 h on Tuesday night",
  );
  // Overlapping windows count once.
  const overlapping: BusinessCalendar = {
    timeZone: 'UTC',
    hours: [
      { days: ['monday'], from: '09:00', to: '13:00' },
      { days: ['monday'], from: '11:00', to: '15:00' },
    ],
    holidays: [],
  };
  t.equal(businessTimeBetween(overlapping, ms('2030-06-10T00:00:00Z'), ms('2030-06-11T00:00:00Z')), 6 * H);
});

t.test('one walk for several amounts; the walk and the measure agree', async (t) => {
  const cal = officeHours('Asia/Kolkata', ['2030-08-15']);
  const from = ms('2030-08-12T05:17:00Z');
  const amounts = [0, 5 * M, 7 * H + 59 * M, 8 * H, 30 * H, 120 * H];
  const moments = addBusinessTime(cal, from, amounts);
  t.same(
    moments,
    amounts.map((a) => addBusinessTime(cal, from, [a])[0]),
    'the same as one walk each',
  );
  for (const [i, a] of amounts.entries())
    t.equal(businessTimeBetween(cal, from, moments[i]!), a, `${a} ms back`);
  t.equal(
    addBusinessTime(AROUND_THE_CLOCK_UTC, from, [H])[0],
    from + H,
    'around the clock: plain arithmetic',
  );
});

t.test(
  'a window from a time to the same time is 24 hours; a thin calendar stops at the horizon',
  async (t) => {
    const shift: BusinessCalendar = {
      timeZone: 'UTC',
      hours: [{ days: ['monday'], from: '09:00', to: '09:00' }],
      holidays: [],
    };
    t.equal(businessTimeBetween(shift, ms('2030-06-10T00:00:00Z'), ms('2030-06-12T00:00:00Z')), 24 * H);
    const thin: BusinessCalendar = {
      timeZone: 'UTC',
      hours: [{ days: ['monday'], from: '09:00', to: '09:01' }],
      holidays: [],
    };
    const year = 365 * 24 * H;
    const [far] = addBusinessTime(thin, ms('2030-06-10T00:00:00Z'), [year]);
    t.ok(far! > ms('2040-01-01T00:00:00Z') && far! < ms('2042-01-01T00:00:00Z'), `the horizon: ${iso(far!)}`);
  },
);
