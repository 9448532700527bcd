import { randomBytes } from 'node:crypto';
import { asCaller } from '@support-desk/platform/testing';
import t from 'tap';
import { BOUNDARY, harness, multipartBody, validBody } from './helpers.js';

// A PDF by its magic number, with a random body (several GridFS chunks).
const PDF = Buffer.concat([Buffer.from('%PDF-1.7\n'), randomBytes(300_000)]);

t.test('attachments: upload, download byte-identical, limits, malformed bodies', async (t) => {
  const h = await harness(t, {
    ATTACHMENT_MAX_BYTES: 1024 * 1024,
    PUBLIC_BASE_URL: 'https://desk.example.com/v1',
  });
  const agent = h.identity.person('agent');
  const viewer = h.identity.person('viewer');
  const admin = h.identity.person('admin');
  const id = (await h.call(agent.principal, 'POST', '/v1/requests', validBody())).body.data.id;
  const upload = async (
    body: Buffer,
    principal = agent.principal,
    requestId = id,
    contentType = `multipart/form-data; boundary=${BOUNDARY}`,
  ) => {
    const res = await h.app.inject({
      method: 'POST',
      url: `/v1/requests/${requestId}/attachments`,
      headers: { ...asCaller(principal), 'content-type': contentType },
      payload: body,
    });
    await h.relay.idle();
    return { status: res.statusCode, body: res.json() };
  };
  const files = h.conn.db!.collection('attachments.files');
  const chunks = h.conn.db!.collection('attachments.chunks');

  const up = await upload(
    multipartBody([{ name: 'file', filename: '../../etc/é<vil>name.txt', type: 'text/plain', data: PDF }]),
  );
  t.equal(up.status, 201);
  t.same(Object.keys(up.body.data).sort(), ['filename', 'id', 'size', 'url']);
  t.equal(up.body.data.size, PDF.length);
  t.equal(up.body.data.filename, 'é_vil_name.txt', 'path stripped, reserved characters replaced');
  t.equal(up.body.data.url, `https://desk.example.com/v1/attachments/${up.body.data.id}`);

  const dl = await h.app.inject({
    method: 'GET',
    url: `/v1/attachments/${up.body.data.id}`,
    headers: asCaller(viewer.principal),
  });
  t.equal(dl.statusCode, 200);
  t.ok(dl.rawPayload.equals(PDF), 'byte-identical');
  t.equal(dl.headers['content-type'], 'application/pdf', 'type from the bytes, not the client');
  t.equal(dl.headers['x-content-type-options'], 'nosniff');
  t.equal(dl.headers['content-security-policy'], "default-src 'none'; sandbox");
  t.match(
    String(dl.headers['content-disposition']),
    /^attachment; filename="__vil_name.txt"; filename\*=UTF-8''%C3%A9_vil_name.txt$/,
  );

  const read = (await h.call(agent.principal, 'GET', `/v1/requests/${id}`)).body.data;
  t.equal(read.attachments.length, 1);
  t.same(Object.keys(read.attachments[0]).sort(), [
    'contentType',
    'filename',
    'id',
    'size',
    'uploadedAt',
    'url',
  ]);
  const events = await h.events({ resourceId: id, type: 'request.attachment_added' });
  t.equal(events.length, 1);
  t.same(events[0].changes?.attachment?.to, {
    id: up.body.data.id,
    filename: 'é_vil_name.txt',
    size: PDF.length,
    contentType: 'application/pdf',
  });

  // Too large: 413, nothing left behind.
  const before = { files: await files.countDocuments(), chunks: await chunks.countDocuments() };
  const big = await upload(
    multipartBody([{ name: 'file', filename: 'big.bin', data: randomBytes(1024 * 1024 + 10) }]),
  );
  t.equal(big.status, 413);
  t.equal(big.body.error.code, 'PAYLOAD_TOO_LARGE');
  t.equal(big.body.error.message, 'body.file is too large: attachments are limited to 1 MiB');
  t.same(
    { files: await files.countDocuments(), chunks: await chunks.countDocuments() },
    before,
    'no partial file',
  );

  // Malformed and wrong bodies: 400/415, and the service keeps serving.
  const truncated = multipartBody([{ name: 'file', filename: 'a.bin', data: randomBytes(50_000) }]).subarray(
    0,
    30_000,
  );
  const bad = await upload(truncated);
  t.equal(bad.status, 400, 'truncated body');
  t.equal(bad.body.error.code, 'VALIDATION_ERROR');
  t.equal(
    (await upload(multipartBody([{ name: 'other', filename: 'a.txt', data: Buffer.from('x') }]))).status,
    400,
    'wrong part name',
  );
  t.equal(
    (await upload(multipartBody([{ name: 'note', data: Buffer.from('just a field') }]))).status,
    400,
    'no file part',
  );
  t.equal(
    (await upload(multipartBody([{ name: 'file', filename: 'e.txt', data: Buffer.alloc(0) }]))).status,
    400,
    'empty file',
  );
  t.equal((await upload(Buffer.from('{"a":1}'), agent.principal, id, 'application/json')).status, 415);
  const twoFiles = await upload(
    multipartBody([
      { name: 'file', filename: 'one.pdf', data: PDF },
      { name: 'file', filename: 'two.pdf', data: PDF },
    ]),
  );
  t.equal(twoFiles.status, 400, 'two file parts: refused');
  t.match(twoFiles.body.error.message, /exactly one file part/);
  t.same(
    { files: await files.countDocuments(), chunks: await chunks.countDocuments() },
    before,
    'nothing stored by failures (the first of two files included)',
  );
  const detail = await h.call(agent.principal, 'GET', `/v1/requests/${id}`);
  t.notOk(
    (detail.body.data.attachments as { filename: string }[]).some((a) => a.filename === 'one.pdf'),
    'the request did not take the first of two files',
  );

  t.equal(
    (
      await upload(
        multipartBody([{ name: 'file', filename: 'v.txt', data: Buffer.from('hi') }]),
        viewer.principal,
      )
    ).status,
    403,
  );
  t.equal(
    (
      await upload(
        multipartBody([{ name: 'file', filename: 'v.txt', data: Buffer.from('hi') }]),
        agent.principal,
        'req_0000000000aaaaaaaaaaaaaaaa',
      )
    ).status,
    404,
  );
  const text = await upload(
    multipartBody([
      { name: 'file', filename: 'notes.txt', type: 'image/png', data: Buffer.from('plain words') },
    ]),
  );
  t.equal(text.status, 201, 'still serving');
  const textDl = await h.app.inject({
    method: 'GET',
    url: `/v1/attachments/${text.body.data.id}`,
    headers: asCaller(agent.principal),
  });
  t.equal(
    textDl.headers['content-type'],
    'application/octet-stream',
    'unrecognised bytes are not trusted as the claimed type',
  );

  t.equal(
    (await h.call(agent.principal, 'GET', '/v1/attachments/att_0000000000aaaaaaaaaaaaaaaa')).status,
    404,
  );
  t.equal((await h.call(agent.principal, 'GET', '/v1/attachments/nope')).status, 404, 'malformed id: 404');
  await h.call(admin.principal, 'DELETE', `/v1/requests/${id}`);
  t.equal(
    (await h.call(agent.principal, 'GET', `/v1/attachments/${up.body.data.id}`)).status,
    404,
    'deleted request: attachment 404',
  );
});
