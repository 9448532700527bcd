import type { ArgSpec, CommandSpec, ListPaging, Options } from './command.js';

/**
 * Every deskctl list is one of these: the same flags (`--limit`, `--page`, `--all`) and the same
 * footer when the page is not the whole list (run/list.ts). This is the table's side: the flags
 * and how the rows are called.
 */
export interface ListSpec {
  description: string;
  options?: Options;
  args?: ArgSpec[];
  examples: string[];
  /** How one and several rows are called in help and in the footer. */
  noun: [one: string, several: string];
  /** Rows a page (default 20) and at most (default 100). */
  defaultLimit?: number;
  maxLimit?: number;
}

export function listCommand(given: ListSpec): CommandSpec {
  const list: ListPaging = {
    noun: given.noun,
    defaultLimit: given.defaultLimit ?? 20,
    maxLimit: given.maxLimit ?? 100,
  };
  const pagingOptions: Options = {
    limit: {
      type: 'string',
      value: 'N',
      description: `${list.noun[1]} per page (1-${list.maxLimit}, default ${list.defaultLimit})`,
    },
    page: { type: 'string', value: 'N', description: 'page number (default 1)' },
    all: { type: 'boolean', description: `every ${list.noun[0]}, all pages` },
  };
  return {
    description: given.description,
    options: { ...given.options, ...pagingOptions },
    ...(given.args ? { args: given.args } : {}),
    examples: given.examples,
    list,
  };
}
