/** Times as the Kubernetes API stores them. Pure: the time comes in as an argument. */

/** RFC 3339 in whole seconds, as metav1.Time marshals (its fraction is dropped, not rounded). */
export function rfc3339(at: Date | number): string {
  return new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
