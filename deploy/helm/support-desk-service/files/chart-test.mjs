// `helm test`: run by node in the application's own image (no other image to pull or trust).
// The release answers ready on /readyz; the gateway also refuses an unauthenticated /v1/me with
// the 401 error envelope. A few tries, bounded, ride over a pod that is still joining the Service.
const base = process.env.TARGET_URL;
const gateway = process.env.SERVICE === 'gateway';
const ATTEMPTS = 5;

async function call(path) {
  const res = await fetch(new URL(path, base), { signal: AbortSignal.timeout(5000) });
  return { status: res.status, body: await res.text() };
}

async function check() {
  const ready = await call('/readyz');
  if (ready.status !== 200) throw new Error(`GET /readyz answered ${ready.status}: ${ready.body}`);
  console.log(`GET ${base}/readyz: 200`);
  if (!gateway) return;
  const me = await call('/v1/me');
  let envelope;
  try {
    envelope = JSON.parse(me.body);
  } catch {
    envelope = null;
  }
  if (me.status !== 401 || envelope?.success !== false || envelope?.error?.code !== 'UNAUTHORIZED')
    throw new Error(`GET /v1/me without credentials answered ${me.status}: ${me.body}`);
  console.log(`GET ${base}/v1/me without credentials: 401 ${envelope.error.code}`);
}

for (let attempt = 1; ; attempt++) {
  try {
    await check();
    break;
  } catch (err) {
    console.error(`attempt ${attempt}/${ATTEMPTS}: ${err.message}`);
    if (attempt === ATTEMPTS) process.exit(1);
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}
