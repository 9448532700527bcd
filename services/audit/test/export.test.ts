// GET /v1/events/export (issue 17): 3,000 events stored through the ingestion path, streamed back
// complete as NDJSON, read from the store batch by batch, resumable, negotiated, and released when
// the client goes away.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type DomainEvent, newId } from '@support-desk/contracts';
import {
  asCaller,
  asPrincipal,
  eventually,
  testCountedMongo,
  testPrincipal,
} from '@support-desk/platform/testing';
import type { mongo } from 'mongoose';
import t from 'tap';
import { actors, countEvents, makeEvent, prepareStore, publish, composeForTest } from './helpers.js';

const COUNT = 3000;
const BATCH = 200;
const T0 = Date.parse('2026-04-01T00:00:00.000Z');
type Json = Record<string, any>;

/** The lines of an NDJSON body, parsed. */
const parseLines = (text: string): Json[] =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Json);

t.test('export', async (t) => {
  const conn = await testCountedMongo(t, 'audit');
  await prepareStore(conn);
  const { app, nc, names } = await composeForTest(t, conn, {
    env: { AUDIT_EXPORT_BATCH_SIZE: String(BATCH), AUDIT_STATS_LOG_MS: '0' },
    start: true,
  });

  // 3,000 events through NATS and the ingestion, 3.5 KB each (about 10 MB in all, more than the
  // socket buffers hold), two per millisecond so ties are broken by id.
  const request = newId('request');
  const padding = 'x'.repeat(1700);
  const events: DomainEvent[] = Array.from({ length: COUNT }, (_, i) =>
    makeEvent(i % 10 === 0 ? 'request.comment_added' : 'request.updated', {
      resourceId: i % 10 === 0 ? request : undefined,
      actor: i % 2 ? actors.admin : actors.agent,
      changes:
        i % 10 === 0
          ? {
              comment: {
                from: null,
                to: { id: newId('comment'), authorId: actors.agent.id, isInternal: true },
              },
            }
          : { description: { from: padding, to: `${padding}${i}` } },
      at: new Date(T0 + Math.floor(i / 2)),
    }),
  );
  // In slices: 3,000 publishes at once outwait JetStream's acks on a loaded machine.
  for (let i = 0; i < COUNT; i += 300) await publish(nc, names, events.slice(i, i + 300));
  await eventually(async () => (await countEvents(conn)) === COUNT, {
    what: `${COUNT} events stored`,
    timeoutMs: 120_000,
    intervalMs: 250,
  });
  const oldestFirst = [...events]
    .sort((a, b) => a.timestamp.localeCompare(b.timestamp) || a.id.localeCompare(b.id))
    .map((e) => e.id);

  const admin = asCaller(testPrincipal('admin'));
  const exportOf = async (query = '', headers: Record<string, string> = {}) => {
    const res = await app.inject({
      method: 'GET',
      url: `/v1/events/export${query}`,
      headers: { ...admin, accept: 'application/x-ndjson', ...headers },
    });
    return { res, lines: res.statusCode === 200 ? parseLines(res.body) : [] };
  };
  const eventLines = (lines: Json[]) => lines.filter((l) => l.type !== 'end');

  t.test('the whole log, oldest first, one event per line, then the end line', async (t) => {
    const commands: string[] = [];
    const client = conn.getClient();
    const onCommand = (e: mongo.CommandStartedEvent) => {
      if (e.commandName === 'find') commands.push(`find ${e.command.find}`);
      else if (e.commandName !== 'endSessions') commands.push(e.commandName);
    };
    client.on('commandStarted', onCommand);
    const { res, lines } = await exportOf();
    client.off('commandStarted', onCommand);
    t.equal(res.statusCode, 200);
    t.match(res.headers['content-type'], /^application\/x-ndjson/);
    t.equal(res.headers['transfer-encoding'], 'chunked', 'streamed: chunked, no length known up front');
    t.notOk(res.headers['content-length']);
    t.equal(lines.length, COUNT + 1);
    const body = eventLines(lines);
    t.same(
      body.map((l) => l.id),
      oldestFirst,
      'every event once, oldest first (timestamp, then id)',
    );
    const end = lines.at(-1)!;
    t.same(end, { type: 'end', count: COUNT, nextCursor: body.at(-1)!.cursor, hasMore: false });
    // The log is read an hour or a day at a time (its span first): these events share one hour.
    t.same(
      commands.filter((c) => c.startsWith('find')),
      ['find listBounds', 'find events'],
      'one query of the log',
    );
    t.ok(
      commands.filter((c) => c === 'getMore').length >= COUNT / BATCH - 1,
      `then read ${BATCH} at a time (${commands.filter((c) => c === 'getMore').length} getMore)`,
    );
    t.notOk(commands.includes('aggregate'), 'no count');
  });

  t.test('each line is the list item plus its cursor (internal notes as stored: no content)', async (t) => {
    const { lines } = await exportOf(`?resourceId=${request}`);
    const list = await app.inject({
      method: 'GET',
      url: `/v1/events?resourceId=${request}&limit=100`,
      headers: admin,
    });
    const items = (list.json().data.events as Json[]).slice().reverse();
    // The list's newest 100, oldest first, are the export's last 100.
    const exported = eventLines(lines).slice(-items.length);
    t.same(
      exported.map(({ cursor: _cursor, ...item }) => item),
      items,
      'the same shape and values as GET /v1/events',
    );
    t.ok(exported.every((l) => typeof l.cursor === 'string'));
    t.notOk(
      exported.some((l) => 'content' in (l.changes?.comment?.to ?? {})),
      'an internal note is announced without its content',
    );
  });

  t.test("resumable: a line's cursor continues right after it; limit cuts with hasMore", async (t) => {
    // One request's 300 events: an equality the store narrows by before it sorts.
    const filter = `resourceId=${request}`;
    const history = oldestFirst.filter((id) => events.find((e) => e.id === id)!.resourceId === request);
    const whole = eventLines((await exportOf(`?${filter}`)).lines);
    t.same(
      whole.map((l) => l.id),
      history,
    );
    const k = 123;
    const rest = eventLines((await exportOf(`?${filter}&cursor=${whole[k].cursor}`)).lines);
    t.same(
      rest.map((l) => l.id),
      history.slice(k + 1),
      'after the event that carried the cursor',
    );
    const seen: string[] = [];
    let cursor: string | null = null;
    for (let n = 0; n < 5; n++) {
      const { lines } = await exportOf(`?${filter}&limit=100${cursor ? `&cursor=${cursor}` : ''}`);
      const end = lines.at(-1)!;
      seen.push(...eventLines(lines).map((l) => l.id));
      t.equal(end.hasMore, n < 2, `slice ${n + 1}: hasMore`);
      cursor = end.nextCursor;
      if (!end.hasMore) break;
    }
    t.same(seen, history, 'three slices of 100 make the whole');
    const later = await exportOf(`?${filter}&cursor=${cursor}`);
    t.same(later.lines, [{ type: 'end', count: 0, nextCursor: cursor, hasMore: false }], 'nothing newer yet');
  });

  t.test('filters as the list; a cursor keeps its filters but not its time window', async (t) => {
    const since = new Date(T0 + 100).toISOString();
    const until = new Date(T0 + 200).toISOString();
    const { lines } = await exportOf(`?type=request.comment_added&since=${since}&until=${until}`);
    const expected = events
      .filter((e) => e.type === 'request.comment_added' && e.timestamp >= since && e.timestamp < until)
      .map((e) => e.id);
    t.same(
      eventLines(lines)
        .map((l) => l.id)
        .sort(),
      expected.sort(),
    );
    const cursor = eventLines(lines)[0].cursor;
    const moved = await exportOf(`?type=request.comment_added&cursor=${cursor}`);
    t.equal(moved.res.statusCode, 200, 'until may move on');
    const other = await exportOf(`?type=request.updated&cursor=${cursor}`);
    t.equal(other.res.statusCode, 400, 'other filters: 400');
    t.equal(other.res.json().error.code, 'VALIDATION_ERROR');
    t.match(
      other.res.headers['content-type'],
      /^application\/json/,
      'errors before the first line: envelope',
    );
    const listCursor = (
      await app.inject({ method: 'GET', url: `/v1/events?resourceId=${request}&limit=5`, headers: admin })
    ).json().data.pagination.nextCursor;
    t.equal((await exportOf(`?cursor=${listCursor}`)).res.statusCode, 400, "a list's cursor");
    t.equal((await exportOf('?page=2')).res.statusCode, 400, 'no page');
  });

  t.test('Accept: NDJSON, */* or none; JSON alone is 406 in the envelope', async (t) => {
    for (const accept of [
      'application/x-ndjson',
      '*/*',
      'application/*',
      'application/json, application/x-ndjson;q=0.1',
    ]) {
      t.equal((await exportOf(`?resourceId=${request}&limit=1`, { accept })).res.statusCode, 200, accept);
    }
    const none = await app.inject({
      method: 'GET',
      url: `/v1/events/export?resourceId=${request}&limit=1`,
      headers: admin,
    });
    t.equal(none.statusCode, 200, 'no Accept');
    const json = await exportOf(`?resourceId=${request}`, { accept: 'application/json' });
    t.equal(json.res.statusCode, 406);
    t.equal(json.res.json().error.code, 'NOT_ACCEPTABLE');
    t.match(json.res.json().error.message, /application\/x-ndjson/);
    const agent = asCaller(testPrincipal('agent'));
    const denied = await exportOf('', agent);
    t.equal(denied.res.statusCode, 403, 'admin scope');
  });

  t.test('streamed with backpressure: a client that goes away releases the store cursor', async (t) => {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.server.address() as AddressInfo).port;
    const url = '/v1/events/export';
    const commands: string[] = [];
    const client = conn.getClient();
    const onCommand = (e: mongo.CommandStartedEvent) => commands.push(e.commandName);
    client.on('commandStarted', onCommand);
    t.teardown(() => client.off('commandStarted', onCommand));
    const headers = {
      accept: 'application/x-ndjson',
      ...asPrincipal(testPrincipal('admin'), { audience: 'audit', method: 'GET', url }),
    };
    const { first, chunked } = await new Promise<{ first: Json; chunked: boolean }>((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port, path: url, headers }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
          const newline = text.indexOf('\n');
          if (newline < 0) return;
          // The first line is here; stop reading and leave, 10 MB before the end.
          req.destroy();
          resolve({
            first: JSON.parse(text.slice(0, newline)) as Json,
            chunked: res.headers['transfer-encoding'] === 'chunked',
          });
        });
      });
      req.on('error', (err) => {
        if (!req.destroyed) reject(err);
      });
      req.setTimeout(30_000, () => req.destroy(new Error('no first line in 30 s')));
    });
    t.equal(first.id, oldestFirst[0], 'the first line');
    t.ok(chunked, 'chunked');
    await eventually(() => commands.includes('killCursors'), {
      what: 'the store cursor closed before its end (killCursors)',
      timeoutMs: 20_000,
    });
    t.pass('the export stopped reading the store when its client left: it was never read whole');
    const after = await exportOf(`?resourceId=${request}&limit=1`);
    t.equal(after.res.statusCode, 200, 'the service carries on');
  });
});
