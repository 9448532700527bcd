import type { NatsNames } from '@support-desk/contracts';
import type { Logger } from '@support-desk/platform/core';
import type { AllowedRanges } from '../events/destination.js';
import type { Send } from '../events/sender.js';
import type { DeliveriesRepository } from '../store/deliveries.js';
import type { LaneLeases } from '../store/lane-leases.js';
import type { SubscriptionsRepository } from '../store/subscriptions.js';
import type { SecretBox } from './secrets.js';

/** What the use cases work with: repositories, ports and settings (no HTTP, no driver). */
export interface Deps {
  names: NatsNames;
  logger: Logger;
  clock: () => Date;
  subscriptions: SubscriptionsRepository;
  deliveries: DeliveriesRepository;
  leases: LaneLeases;
  secrets: SecretBox;
  send: Send;
  /** Ranges the operator allows despite the SSRF rules (checked on URLs given as an address). */
  allowedRanges: AllowedRanges;
  /** WEBHOOKS_ALLOW_HTTP: plain http subscription URLs to any host (else only to admitted loopback). */
  allowHttp: boolean;
  /** How long a rotated-out secret keeps signing. */
  rotationOverlapMs: number;
  /**
   * New work: the lanes named are due now (no store read to find them), with the stream sequence
   * of the event that made their deliveries when there is one; none named, a pass soon.
   */
  wake: (lanes?: readonly string[], streamSeq?: number | null) => void;
  /**
   * The stream sequence through which the intake (every replica's) has taken in every event: the
   * deliveries of all events up to it are stored.
   */
  intakeFloor: () => Promise<number>;
}
