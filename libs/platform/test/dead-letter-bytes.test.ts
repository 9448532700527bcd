import t from 'tap';
import { deadLetterStore, messageBytes, messageText } from '../src/subpaths/messaging.js';
import { testMongo } from '../src/testing/index.js';

// A poison message may be any bytes: each kind is written to the store in use and read back exact.
t.test('a dead letter keeps the exact bytes of any message, on the store in use', async (t) => {
  const conn = await testMongo(t, 'deadletters');
  const store = deadLetterStore(conn);
  const messages: [string, Uint8Array][] = [
    ['UTF-8 text', new TextEncoder().encode('{"type":"request.created","title":"café"}')],
    ['not UTF-8', new Uint8Array([0xff, 0xfe, 0x41])],
    ['U+0000 in UTF-8 text', new TextEncoder().encode('{"title":"a\u0000b"}')],
  ];
  for (const [what, bytes] of messages) {
    const body = messageText(bytes);
    t.equal(
      body.dataBase64 === undefined,
      what === 'UTF-8 text',
      `${what}: bytes kept only when the text is not exact`,
    );
    t.notOk(body.data.includes('\u0000'), `${what}: the text holds no U+0000`);
    await store.write({
      stream: 's',
      consumer: 'c',
      subject: `x.${messages.findIndex(([w]) => w === what)}`,
      streamSequence: 1,
      deliveryCount: 1,
      reason: what,
      ...body,
      failedAt: new Date(),
    });
    const stored = await store.model.findOne({ reason: what }).lean<{ data: string; dataBase64?: string }>();
    t.same(Buffer.from(messageBytes(stored!)), Buffer.from(bytes), `${what}: replayed as it came`);
  }
});
