import { DomainEvent, EVENT_CATALOGUE } from '@support-desk/contracts';
import { PoisonMessageError } from '@support-desk/platform';
import { TypeCompiler } from '@sinclair/typebox/compiler';

const checker = TypeCompiler.Compile(DomainEvent);
const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Parses and validates one published event. Anything that can never be stored as a valid
 * audit record (not UTF-8, not JSON, failing the DomainEvent schema, a resourceType that
 * contradicts the type's category) is poison: it goes to the dead letters, never blocks.
 */
export function decodeEvent(data: Uint8Array): DomainEvent {
  let value: unknown;
  try {
    value = JSON.parse(decoder.decode(data));
  } catch (err) {
    throw new PoisonMessageError(`not JSON: ${(err as Error).message}`);
  }
  if (!checker.Check(value)) {
    const first = checker.Errors(value).First();
    const where = first?.path || '(root)';
    throw new PoisonMessageError(`not a DomainEvent: ${where} ${first?.message ?? 'is invalid'}`);
  }
  if (EVENT_CATALOGUE[value.type] !== value.resourceType) {
    throw new PoisonMessageError(
      `not a DomainEvent: /resourceType ${value.resourceType} does not match type ${value.type}`,
    );
  }
  return value;
}
