/** The node webhook's pure request layer: authentication, admission reviews, node events. */
export { classifyRequest } from './request.ts';
export { admissionBudgetMs, admissionDenial, admissionResponse, isProviderIdJoin, networkUnavailablePatch, podCidrPatch, type AdmissionReview, type AdmissionReviewResponse, type JsonPatchOp } from './admission.ts';
export type { NodeEvent } from './events.ts';
