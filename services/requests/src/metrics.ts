import { counter } from '@support-desk/platform/metrics';

/** The requests service's own metrics (the platform adds HTTP, outbox, consumer and process ones). */
export const slaEvents = counter(
  'requests_sla_events_total',
  'SLA events this replica emitted, by kind (warning, breach) and clock (response, resolution)',
  ['kind', 'clock'],
);

export const attachmentsStored = counter('requests_attachments_stored_total', 'Attachments stored');

export const attachmentBytesStored = counter(
  'requests_attachment_bytes_stored_total',
  'Bytes of the attachments stored',
);
