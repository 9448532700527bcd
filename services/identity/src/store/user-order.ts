import type { USER_SORT_FIELDS } from '@support-desk/contracts';
import { type HourWalkOrder, type ListSort, listOrders } from '@support-desk/platform/store';
import type { UserDoc } from './users.js';

export type UserSort = ListSort<(typeof USER_SORT_FIELDS)[number]>;

/** The list's default order: newest first. */
export const DEFAULT_USER_ORDER: UserSort = { field: 'createdAt', descending: true };

/** The stored keys behind each `sort` of the users lists; `email` is the lower-cased `emailKey`. */
export const userOrders = listOrders<UserSort['field'], UserDoc>({
  createdAt: { fields: ['createdAt'], kinds: ['date'] },
  updatedAt: { fields: ['updatedAt'], kinds: ['date'] },
  name: { fields: ['name'], kinds: ['string'] },
  email: { fields: ['emailKey'], kinds: ['string'] },
});

/**
 * How each `sort` is walked: the time sorts an hour, a day, then a month at a time (users are
 * spread thinly over years: months keep a quiet year to twelve lookups), name and email one
 * initial at a time (the rank field, and the sort key the rank's range bounds on MongoDB).
 */
export const userWalks: {
  time: Record<'createdAt' | 'updatedAt', HourWalkOrder>;
  initial: Record<'name' | 'email', { rank: string; key: string }>;
} = {
  time: {
    createdAt: { time: 'createdAt', hour: 'createdHour', day: 'createdDay', month: 'createdMonth' },
    updatedAt: { time: 'updatedAt', hour: 'updatedHour', day: 'updatedDay', month: 'updatedMonth' },
  },
  initial: { name: { rank: 'nameRank', key: 'name' }, email: { rank: 'emailRank', key: 'emailKey' } },
};
