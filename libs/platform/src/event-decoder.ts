import { DomainEvent, EVENT_CATALOGUE } from '@support-desk/contracts';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { PoisonMessageError } from './consumer.js';

const checker = TypeCompiler.Compile(DomainEvent);
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Parses and validates one published domain event, for every consumer of the events stream.
 * Anything that can never be a valid event (not UTF-8, not JSON, failing the DomainEvent schema,
 * a resourceType that contradicts the type's category) is poison: it goes to the consumer's dead
 * letters and never blocks the stream.
 */
export function decodeDomainEvent(data: Uint8Array): DomainEvent {
  let value: unknown;
  try {
    value = JSON.parse(utf8.decode(data));
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
