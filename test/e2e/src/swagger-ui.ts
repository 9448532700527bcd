import type { Locator, Page } from 'playwright-core';

/** Driving the /docs reference (Swagger UI) like a reader: Authorize, Try it out, Execute. */

/** Authorize with an API key (the `apiKey` bearer scheme), then close the dialog. */
export async function authorize(page: Page, key: string): Promise<void> {
  await page.locator('button.authorize').first().click();
  await page.locator('#auth-bearer-value').fill(key);
  await page.getByRole('button', { name: 'Apply credentials' }).click();
  await page.locator('.modal-ux button.close-modal').click();
}

/** One operation's block, opened (`operationId` as in the document, `tag` its first path segment). */
export async function openOperation(page: Page, tag: string, operationId: string): Promise<Locator> {
  const block = page.locator(`#operations-${tag}-${operationId}`);
  await block.locator('.opblock-summary-control').click();
  await block.locator('.opblock-body').waitFor();
  return block;
}

export interface TryItOut {
  /** What each named input held once "Try it out" was pressed (before anything was typed). */
  prefilled: Record<string, string>;
  status: number;
  body: string;
  curl: string;
}

/**
 * "Try it out" on an open operation: reads the named inputs as the page filled them, types
 * `fill` (parameter name → value), presses Execute and reads the live response.
 */
export async function tryItOut(
  block: Locator,
  { read = [], fill = {} }: { read?: string[]; fill?: Record<string, string> },
): Promise<TryItOut> {
  await block.locator('button.try-out__btn').click();
  const input = (name: string) => block.locator(`tr[data-param-name="${name}"] input`);
  const prefilled: Record<string, string> = {};
  for (const name of read) prefilled[name] = await input(name).inputValue();
  for (const [name, value] of Object.entries(fill)) await input(name).fill(value);
  await block.locator('button.execute').click();
  const status = block.locator('.live-responses-table .response .response-col_status').first();
  await status.waitFor();
  return {
    prefilled,
    status: Number(await status.textContent()),
    body:
      (await block.locator('.live-responses-table .response-col_description pre').first().textContent()) ??
      '',
    curl: (await block.locator('.curl-command').first().textContent()) ?? '',
  };
}
