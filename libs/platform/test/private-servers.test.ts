import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const testing = fileURLToPath(new URL('../src/testing/index.js', import.meta.url));

/** Whether something accepts connections on the loopback port. */
const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

t.test('a file whose top-level set-up fails leaves no private server running', async (t) => {
  // A test file in miniature: it starts a private NATS, then its set-up throws before any test
  // could register or run a teardown.
  const file = `
    const { startPrivateNats } = await import(${JSON.stringify(testing)});
    const nats = await startPrivateNats({ teardown() {} });
    console.log(nats.port);
    throw new Error('set-up failed');
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', file], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let out = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  t.equal(code, 1, 'the file failed');
  const port = Number(out.trim());
  t.ok(port > 0, `its server listened (port ${out.trim()})`);

  let open = true;
  for (let i = 0; i < 50 && open; i++) {
    open = await listening(port);
    if (open) await new Promise((r) => setTimeout(r, 100));
  }
  t.notOk(open, 'and is gone with it');
});
