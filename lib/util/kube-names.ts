/**
 * Kubernetes' RFC 1123 subdomain rule (k8s.io/apimachinery pkg/util/validation/validation.go,
 * IsDNS1123Subdomain: lower-case labels `[a-z0-9]([-a-z0-9]*[a-z0-9])?` joined by dots, at most
 * DNS1123SubdomainMaxLength = 253 characters). The API server validates node names with it
 * (ValidateNodeName is NameIsDNSSubdomain) and label-key prefixes too.
 */
export const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
export const DNS1123_SUBDOMAIN_MAX_LENGTH = 253;

export function isDns1123Subdomain(value: unknown): value is string {
  return typeof value === 'string' && value.length <= DNS1123_SUBDOMAIN_MAX_LENGTH && DNS1123_SUBDOMAIN.test(value);
}

/** Whether `value` is a name Kubernetes accepts for a Node. */
export const isNodeName = isDns1123Subdomain;
