import type { USER_SORT_FIELDS } from '@support-desk/contracts';
import { type ListSort, listOrders } from '@support-desk/platform/store';
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
