// The one table `npm run bench` prints at the end, in Markdown so it can be pasted into
// BENCHMARKS.md: the machine, date, commit and store it ran on, then every workspace's figures
// from the JSON its bench wrote (a bench that did not run or failed leaves its rows as "–").
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';

/** 4362 → "4 362" (BENCHMARKS.md's style); missing → "–". */
const num = (n) =>
  typeof n === 'number' && Number.isFinite(n)
    ? Math.round(n).toLocaleString('en-US').replace(/,/g, ' ')
    : '–';
const ms = (n) => (typeof n === 'number' && Number.isFinite(n) ? `${num(n)} ms` : '–');
const ratio = (n) => (typeof n === 'number' && Number.isFinite(n) ? n.toFixed(2) : '–');

function cpuModel() {
  try {
    const line = fs
      .readFileSync('/proc/cpuinfo', 'utf8')
      .split('\n')
      .find((l) => /^model name\s*:/.test(l));
    if (line) return line.split(':')[1].trim();
  } catch {}
  return os.cpus()[0]?.model ?? 'unknown CPU';
}

function git(args, cwd) {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : '';
}

/** What the figures were measured on, read once before the benches start. */
export function machine(root) {
  const commit = git(['rev-parse', '--short', 'HEAD'], root) || 'unknown';
  const dirty = git(['status', '--porcelain', '--untracked-files=no'], root) !== '';
  return {
    cores: os.cpus().length,
    cpu: cpuModel(),
    memoryGiB: +(os.totalmem() / 2 ** 30).toFixed(1),
    loadAtStart: os.loadavg()[0],
    node: process.version,
    date: new Date().toISOString(),
    commit: dirty ? `${commit} (with uncommitted changes)` : commit,
  };
}

export function readResults(file) {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
}

const row = (cells) => `| ${cells.join(' | ')} |`;

/** Rows of the stack bench (through the gateway): max req/s, latency at half of it. */
function stackRows(stack) {
  const how = stack ? `${stack.connections} connections, ${stack.seconds} s per run` : 'not run';
  const phase = (name, p) =>
    row([
      name,
      `${num(p?.maxRps)} req/s`,
      p ? `${num(p.atHalf.rps)} req/s (offered ${num(p.halfRate)})` : '–',
      ms(p?.atHalf.p50),
      ms(p?.atHalf.p99),
      p
        ? `${how}; latency at 50 % (at max: p50 ${ms(p.atMax.p50)}, p99 ${ms(p.atMax.p99)})${errors(p.atMax, p.atHalf)}`
        : how,
    ]);
  return [
    phase('through the gateway: create `POST /v1/requests`', stack?.create),
    phase('through the gateway: update `PATCH /v1/requests/:id`', stack?.update),
    phase('through the gateway: single read `GET /v1/requests/:id`', stack?.read),
    row([
      'through the gateway: list `GET /v1/requests?status&priority`',
      `${num(stack?.list?.rps)} req/s`,
      '',
      ms(stack?.list?.p50),
      ms(stack?.list?.p99),
      stack ? `${how}; latency at max${errors(stack.list)}` : how,
    ]),
    conditional('create with `Idempotency-Key`', stack?.conditional?.createWithKey, stack?.create, how),
    conditional('update with `If-Match`', stack?.conditional?.updateIfMatch, stack?.update, how),
    conditional(
      'single read with `If-None-Match` (304)',
      stack?.conditional?.readIfNoneMatch,
      stack?.read,
      how,
    ),
  ];
}

/** A conditional call at max next to its plain call's max, with the statuses it got. */
function conditional(name, run, plain, how) {
  const statuses = Object.entries(run?.statuses ?? {})
    .map(([code, count]) => `${code} × ${num(count)}`)
    .join(', ');
  const share = run && plain?.maxRps ? ` (${ratio(run.rps / plain.maxRps)} of the plain call's max)` : '';
  return row([
    `through the gateway: ${name}`,
    `${num(run?.rps)} req/s${share}`,
    '',
    ms(run?.p50),
    ms(run?.p99),
    run
      ? `${how}; latency at max (plain: p50 ${ms(plain?.atMax.p50)}, p99 ${ms(plain?.atMax.p99)}); statuses ${statuses}${run.errors + run.timeouts ? `; **${run.errors} errors, ${run.timeouts} timeouts**` : ''}`
      : how,
  ]);
}

/** How a gateway bench row was measured, from what its JSON says (older JSON: less). */
function gatewayHow(gw, r) {
  const settings = gw.settings
    ? `, median of ${gw.settings.rounds} rounds of ${gw.settings.durationS} s${gw.settings.rate ? ` at ${gw.settings.rate}/s` : ''}`
    : '';
  const cpu =
    typeof r?.cpuUs?.gateway === 'number' ? `; gateway CPU ${num(r.cpuUs.gateway)} µs per call` : '';
  return `stand-in upstream${settings}, latency at max${cpu}${errors(r)}`;
}

function errors(...runs) {
  const bad = runs.reduce((n, r) => n + (r?.non2xx ?? 0) + (r?.errors ?? 0) + (r?.timeouts ?? 0), 0);
  return bad ? `; **${bad} non-2xx/errors**` : '';
}

/** The whole report as Markdown. `results` maps a workspace name to its JSON (or null). */
export function renderTable({ machine: m, store, results }) {
  const stack = results.e2e;
  const direct = results.requests;
  const audit = results.audit;
  const webhooks = results.webhooks;
  const gw = results.gateway;
  const lines = [
    `## npm run bench, ${m.date.slice(0, 16).replace('T', ' ')} UTC`,
    '',
    `- machine: ${m.cores} cores (${m.cpu}), ${m.memoryGiB} GiB memory, Node ${m.node.replace(/^v/, '')}, load average ${m.loadAtStart.toFixed(2)} at the start`,
    `- commit: ${m.commit}`,
    `- store: **${store.label}** (${store.evidence})`,
    stack
      ? `- stack: identity, requests, audit and gateway as processes, through the gateway with an agent's API key; ${num(stack.documents?.before)} requests in the store before the runs (${num(stack.prefill?.longDescriptions)} with ~15 KB descriptions), ${num(stack.documents?.after)} after`
      : '- stack: not run',
    '',
    row(['figure', 'max', 'at 50 % of max', 'p50', 'p99', 'how']),
    row(['---', '---:', '---:', '---:', '---:', '---']),
    ...stackRows(stack),
    row([
      'requests service direct: create (relay on)',
      `${num(direct?.create?.rps)} req/s`,
      '',
      ms(direct?.create?.p50),
      ms(direct?.create?.p99),
      direct
        ? `no gateway, ${direct.connections} connections, ${direct.seconds} s, latency at max`
        : 'not run',
    ]),
    row([
      'requests service direct: single read',
      `${num(direct?.read?.rps)} req/s`,
      '',
      ms(direct?.read?.p50),
      ms(direct?.read?.p99),
      direct ? 'latency at max' : 'not run',
    ]),
    row([
      'requests outbox relay drain',
      `${num(direct?.relayDrain?.eventsPerSecond)} events/s`,
      '',
      '',
      '',
      direct?.relayDrain
        ? `${num(direct.relayDrain.published)} of a ${num(direct.relayDrain.backlog)}-request backlog in ${direct.relayDrain.seconds.toFixed(1)} s`
        : 'not run',
    ]),
    row([
      'audit ingestion (p50/p99: publish-to-stored lag)',
      `${num(audit?.eventsPerSecond)} events/s`,
      '',
      ms(audit?.lagMs?.p50),
      ms(audit?.lagMs?.p99),
      audit
        ? `${num(audit.stored)}/${num(audit.events)} events stored, ${num(audit.duplicates)} duplicates`
        : 'not run',
    ]),
    ...(webhooks?.runs ?? [null]).map((r) =>
      row([
        r
          ? `webhooks delivery, ${r.label}, ${r.replicas} replica${r.replicas > 1 ? 's' : ''}`
          : 'webhooks delivery',
        r ? `${num(r.deliveriesPerSecond)} deliveries/s` : '',
        '',
        '',
        '',
        r
          ? `${num(r.succeeded)}/${num(r.events)} delivered in ${r.seconds} s, ${num(r.attempts)} attempts`
          : 'not run',
      ]),
    ),
    ...[
      ['gateway bench: direct to the stand-in', gw?.direct],
      ['gateway bench: proxy only', gw?.proxyOnly],
      ['gateway bench: full gateway, API key', gw?.gatewayKey],
      ['gateway bench: full gateway, JWT', gw?.gatewayJwt],
      ['gateway bench: API key, limits off', gw?.limitsOff],
    ].map(([name, r]) =>
      row([name, `${num(r?.rps)} req/s`, '', ms(r?.p50), ms(r?.p99), gw ? gatewayHow(gw, r) : 'not run']),
    ),
    row([
      'gateway ratios',
      '',
      '',
      '',
      '',
      [
        `gateway / direct **${ratio(gw?.ratios?.gatewayOverDirect)}**`,
        `JWT / API key **${ratio(gw?.ratios?.jwtOverKey)}**`,
        `limits on / off **${ratio(gw?.ratios?.limitsOnOverOff)}**`,
        gw?.ratios?.proxyOnlyOverDirect !== undefined &&
          `proxy only / direct ${ratio(gw.ratios.proxyOnlyOverDirect)}`,
        gw?.ratios?.gatewayOverProxyOnly !== undefined &&
          `full gateway / proxy only ${ratio(gw.ratios.gatewayOverProxyOnly)}`,
        gw?.limitCpuUs &&
          `gateway + Redis CPU per call ${num(gw.limitCpuUs.on)} µs limits on, ${num(gw.limitCpuUs.off)} µs off`,
      ]
        .filter(Boolean)
        .join(', '),
    ]),
  ];
  return `${lines.join('\n')}\n`;
}
