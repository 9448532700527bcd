import { readFileSync } from 'node:fs';

/** `libs/contracts/test/fixtures/`, from `dist/src/fixtures.js`. */
const FIXTURES = new URL('../../test/fixtures/', import.meta.url);

const read = <T>(name: string): T => JSON.parse(readFileSync(new URL(name, FIXTURES), 'utf8')) as T;

type Json = Record<string, unknown>;

/**
 * The frozen example messages of every version of every shape that crosses a process boundary
 * (see README: never edited, only added to). `v1`: what this release's producers write;
 * `unversioned`: written before versions existed; `future`: what a newer producer might write
 * within the rules (extra fields, a higher `v`, a type or kind this release does not know).
 */
export const fixtures = {
  events: () => ({
    v1: read<Json[]>('events.v1.json'),
    unversioned: read<Json[]>('events.unversioned.json'),
    future: read<Json[]>('events.future.json'),
    /** v1 events with the `snapshot` added within version 1 (issue 29). */
    snapshots: read<Json[]>('events.v1-snapshots.json'),
  }),
  notices: () => ({
    v1: read<Json[]>('notices.v1.json'),
    unversioned: read<Json[]>('notices.unversioned.json'),
    future: read<Json[]>('notices.future.json'),
  }),
  /**
   * Principal assertions' claims as the gateway signs them, without `iat`/`exp`: an assertion
   * lives seconds, so a test stamps the time and signs the claims with a key of its own.
   */
  principal: () => read<Record<'v1' | 'unversioned' | 'future', Json>>('principal.json'),
  rpc: () =>
    read<
      Record<
        'v1' | 'unversioned' | 'future',
        { requests: Record<string, Json>; replies: Record<string, Json> }
      >
    >('rpc.json'),
  /** The webhooks admin RPC (console, deskctl → webhooks): requests, replies and refusals. */
  webhooksAdmin: () =>
    read<
      Record<
        'v1' | 'future',
        { requests: Record<string, Json>; replies: Record<string, Json>; errors: Record<string, Json> }
      >
    >('webhooks-admin.json'),
  /** The requests admin RPC (console, deskctl → requests): SLA policies, the trash, bulk jobs. */
  requestsAdmin: () =>
    read<
      Record<
        'v1' | 'future',
        { requests: Record<string, Json>; replies: Record<string, Json>; errors: Record<string, Json> }
      >
    >('requests-admin.json'),
};
