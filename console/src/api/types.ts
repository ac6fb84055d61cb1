// Short names for the generated schema types the pages use.
import type { components } from './schema';

type S = components['schemas'];
export type Run = S['Run'];
export type RunDetail = S['RunDetail'];
export type RunAttempt = S['RunAttempt'];
export type RunEvent = S['RunEvent'];
export type RunState = S['RunState'];
export type MetricSummary = S['MetricSummary'];
export type MetricPoint = S['MetricPoint'];
export type QueuedRun = S['QueuedRun'];
export type QueueView = S['QueueView'];
export type WorkspaceQuota = S['WorkspaceQuota'];
export type QuotaRequest = S['QuotaRequest'];
export type EvidenceSealed = S['EvidenceSealed'];
export type EvidencePreview = S['EvidencePreview'];
export type EvidencePublicKey = S['EvidencePublicKey'];
export type ValidationResult = S['ValidationResult'];
export type Node = S['Node'];

export const RUN_STATES: RunState[] = ['Accepted', 'Queued', 'Admitted', 'Running', 'Recovering', 'Succeeded', 'Failed', 'Cancelled'];
