export { type AuditAppDeps, buildApp } from './app.js';
export { type AuditConfig, auditConfigSchema, loadAuditConfig } from './config.js';
export { type Ingestion, type IngestionStats, startIngestion, toStoredEvent } from './events/ingestion.js';
export { eventModel, type StoredEvent } from './store/event-model.js';
export { type Retention, startRetention } from './store/retention.js';
