import type { RequestStatus, Role } from '@support-desk/contracts';

/**
 * The one table of allowed status moves. Moving to the current status is a no-op, not a move.
 * `closed → in_progress` is the admin-only reopen (ADMIN_ONLY below).
 */
export const TRANSITIONS: Readonly<Record<RequestStatus, readonly RequestStatus[]>> = {
  open: ['assigned', 'in_progress', 'pending', 'resolved', 'closed'],
  assigned: ['in_progress', 'pending', 'resolved', 'open'],
  in_progress: ['pending', 'resolved'],
  pending: ['in_progress', 'resolved'],
  resolved: ['closed', 'in_progress'],
  closed: ['in_progress'],
};

/** Moves in TRANSITIONS that only an admin may make. */
const ADMIN_ONLY: ReadonlyArray<readonly [RequestStatus, RequestStatus]> = [['closed', 'in_progress']];

/** Statuses in which the resolution clock is stopped. */
const STOPPED_STATUSES: readonly RequestStatus[] = ['resolved', 'closed'];

export type TransitionVerdict = { ok: true } | { ok: false; reason: string };

const adminOnly = (from: RequestStatus, to: RequestStatus) =>
  ADMIN_ONLY.some(([f, t]) => f === from && t === to);

/** "from closed a request can move to: in_progress (admins only)": what would be valid instead. */
function allowedMoves(from: RequestStatus): string {
  const moves = TRANSITIONS[from].map((to) => (adminOnly(from, to) ? `${to} (admins only)` : to));
  return `from ${from} a request can move to: ${moves.join(', ')}`;
}

export function checkTransition(from: RequestStatus, to: RequestStatus, role: Role): TransitionVerdict {
  if (!TRANSITIONS[from].includes(to)) {
    return {
      ok: false,
      reason: `Status transition from ${from} to ${to} is not allowed; ${allowedMoves(from)}`,
    };
  }
  if (adminOnly(from, to) && role !== 'admin') {
    return { ok: false, reason: `Status transition from ${from} to ${to} is allowed only for admins` };
  }
  return { ok: true };
}

export const isStopped = (status: RequestStatus) => STOPPED_STATUSES.includes(status);
