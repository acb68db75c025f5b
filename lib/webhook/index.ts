/** The node webhook's pure request layer: authentication, admission reviews, node events. */
export {
  MAX_BODY_BYTES,
  TOKEN_PARAMETER,
  classifyRequest,
  type ClassifiedRequest,
  type RejectedRequest,
  type WebhookOptions,
  type WebhookRequest,
} from './request.ts';
export {
  ADMISSION_API_VERSION,
  admissionResponse,
  admissionReviewSchema,
  jsonPointer,
  looksLikeAdmissionReview,
  podCidrPatch,
  type AdmissionOperation,
  type AdmissionRequest,
  type AdmissionReview,
  type AdmissionReviewResponse,
  type JsonPatchOp,
} from './admission.ts';
export {
  MAX_CLOCK_SKEW_SECONDS,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  eventSignature,
  nodeEventSchema,
  signEvent,
  type NodeEvent,
  type NodeEventType,
  type SignatureHeaders,
} from './events.ts';
export { isNodeName } from './validation.ts';
