/**
 * What the API server does to a Node before it stores it, in its order: the v1 conversion of the
 * pod CIDR fields, then validation on create and on update (the subset podroute meets).
 *
 * - Conversion (k8s pkg/apis/core/v1/conversion.go `Convert_v1_NodeSpec_To_core_NodeSpec` and back):
 *   `podCIDR` alone fills `podCIDRs`; a `podCIDR` that differs from `podCIDRs[0]` wins and the list
 *   becomes `[podCIDR]`; on the way out `podCIDR` is `podCIDRs[0]`.
 * - Validation (k8s pkg/apis/core/validation `ValidateNode`, `ValidateNodeUpdate`): each pod CIDR
 *   is a CIDR (not necessarily canonical: the legacy-field rule; leading zeros allowed, see
 *   `familyOf`); two or more are one of each IP family; a set list never changes (`node updates
 *   may not change podCIDR except from "" to valid`); providerID only goes from "" to a value;
 *   uid is immutable.
 */
import { forbidden, invalidValue, required, throwIfInvalid, type FieldError } from './field-errors.ts';
import { metadataOf, nameOf } from './objects.ts';
import { isObject, type Json, type JsonObject } from './patch.ts';

const CIDR_EXAMPLE = 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)';

/**
 * 4 or 6 for a CIDR string (host bits allowed), null for anything else. kube-apiserver 1.32 parses
 * pod CIDRs with k8s.io/utils/net `ParseCIDRSloppy` (the Go 1.16 parser, kept for stored values):
 * an IPv4 octet or the prefix may have leading zeros and is read as decimal (`010.244.1.0/24` is
 * 10.244.1.0/24). Refusing them is KEP-4858's StrictIPCIDRValidation, alpha in 1.33.
 */
function familyOf(cidr: string): 4 | 6 | null {
  const m = cidr.match(/^([^/]+)\/(\d+)$/);
  if (!m) return null;
  const [, address = '', bits = ''] = m;
  const prefix = Number(bits);
  if (/^\d+(\.\d+){3}$/.test(address)) {
    return address.split('.').every((o) => Number(o) <= 255) && prefix <= 32 ? 4 : null;
  }
  if (address.includes(':') && /^[0-9a-fA-F:.]+$/.test(address) && (address.match(/::/g) ?? []).length <= 1) return prefix <= 128 ? 6 : null;
  return null;
}

const stringList = (value: Json | undefined): string[] | null => (Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : null);

/** The v1 -> internal -> v1 round trip of spec.podCIDR(s); returns a new node. */
export function convertPodCidrs(node: JsonObject): JsonObject {
  if (!isObject(node.spec)) return node;
  const spec = { ...node.spec };
  const single = typeof spec.podCIDR === 'string' ? spec.podCIDR : '';
  const list = stringList(spec.podCIDRs) ?? [];
  let internal = list;
  if (single !== '' && list.length > 0 && single !== list[0]) internal = [single];
  if (single !== '' && list.length === 0) internal = [single];
  if (internal.length > 0) {
    spec.podCIDR = internal[0] ?? '';
    spec.podCIDRs = [...internal];
  }
  return { ...node, spec };
}

function podCidrErrors(node: JsonObject): FieldError[] {
  const spec = isObject(node.spec) ? node.spec : {};
  const raw = spec.podCIDRs;
  if (raw === undefined || raw === null) return [];
  const list = stringList(raw);
  if (list === null) return [invalidValue('spec.podCIDRs', raw, 'must be a list of strings')];
  const errors: FieldError[] = [];
  list.forEach((cidr, i) => {
    if (familyOf(cidr) === null) errors.push(invalidValue(`spec.podCIDRs[${i}]`, cidr, CIDR_EXAMPLE));
  });
  if (list.length > 1) {
    const families = list.map(familyOf);
    const dualStack = list.length === 2 && families.includes(4) && families.includes(6);
    if (!dualStack) errors.push(invalidValue('spec.podCIDRs', list, 'may specify no more than one CIDR for each IP family'));
  }
  return errors;
}

/** 422 unless `node` (already converted) may be created. */
export function validateNodeCreate(node: JsonObject): void {
  const name = nameOf(node) ?? '';
  const errors: FieldError[] = [];
  if (name === '') errors.push({ ...required('metadata.name'), detail: 'name or generateName is required' });
  errors.push(...podCidrErrors(node));
  throwIfInvalid('Node', name, errors);
}

/** 422 unless `node` (already converted) may replace `old`. */
export function validateNodeUpdate(node: JsonObject, old: JsonObject): void {
  const name = nameOf(node) ?? '';
  const errors = podCidrErrors(node);
  const spec = isObject(node.spec) ? node.spec : {};
  const oldSpec = isObject(old.spec) ? old.spec : {};
  const oldList = stringList(oldSpec.podCIDRs) ?? [];
  const list = stringList(spec.podCIDRs) ?? [];
  if (oldList.length > 0 && (oldList.length !== list.length || oldList.some((c, i) => c !== list[i]))) {
    errors.push(forbidden('spec.podCIDRs', 'node updates may not change podCIDR except from "" to valid'));
  }
  const oldProvider = typeof oldSpec.providerID === 'string' ? oldSpec.providerID : '';
  if (oldProvider !== '' && spec.providerID !== oldProvider) {
    errors.push(forbidden('spec.providerID', 'node updates may not change providerID except from "" to valid'));
  }
  const uid = metadataOf(node).uid;
  if (uid !== undefined && uid !== metadataOf(old).uid) errors.push(invalidValue('metadata.uid', uid, 'field is immutable'));
  throwIfInvalid('Node', name, errors);
}
