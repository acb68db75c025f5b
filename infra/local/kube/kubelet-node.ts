/**
 * Nodes shaped like the ones the kubelet registers on EC2 (an EKS managed node group, Amazon Linux
 * 2023): the body of the kubelet's `POST /api/v1/nodes`, about 8 KB of JSON (a real kubelet sent
 * 7.9 KB), most of it images and nodeInfo. The API server adds the rest (uid, resourceVersion,
 * creationTimestamp, managedFields, the not-ready taint), so none of it is here; nor are labels the
 * kubelet may not set (NodeRestriction: the AWS cloud controller manager, not the kubelet, writes
 * `k8s.io/cloud-provider-aws`), nor annotations other controllers write
 * (`node.alpha.kubernetes.io/ttl`). Recorded: a real kube-apiserver 1.32 refused the older body
 * with server-set fields (500) and with that label (403).
 *
 * A pure, deterministic function of its input: the same spec gives the same bytes (digests, boot
 * ids and timestamps are derived from the name and the index, never from a clock or a random
 * source).
 *
 * Field shapes follow the Kubernetes API reference for Node v1
 * (kubernetes.io/docs/reference/kubernetes-api/cluster-resources/node-v1/) and what the kubelet sets
 * at registration and in its status updates (pkg/kubelet/kubelet_node_status.go: labels
 * kubernetes.io/hostname, os, arch, node.kubernetes.io/instance-type and the topology zone/region;
 * capacity and allocatable; the MemoryPressure, DiskPressure, PIDPressure and Ready conditions;
 * addresses; daemonEndpoints; nodeInfo; images, at most 50 by size: --node-status-max-images).
 * EKS adds its eks.amazonaws.com/* labels, and the AWS cloud provider sets the providerID
 * `aws:///<zone>/<instance id>` and the InternalIP / InternalDNS / Hostname addresses
 * (kubernetes/cloud-provider-aws). `podCidrs` and `networkUnavailable` describe a node a
 * controller already wrote to (a kubelet may also send them itself); whoever writes is recorded by
 * the API server, not here.
 */
import { createHash } from 'node:crypto';

export interface KubeletNodeSpec {
  /** Node name, e.g. `ip-10-0-1-10.ec2.internal`. */
  name: string;
  instanceId: string;
  /** Availability zone, e.g. `us-east-1a`; the region is the zone without its last letter. */
  zone: string;
  /** Primary private IPv4 address. */
  privateIp: string;
  /** spec.podCIDR(s); absent = not allocated yet. */
  podCidrs?: readonly string[];
  /** Varies boot ids and timestamps between nodes; default 0. */
  index?: number;
  instanceType?: string;
  nodegroup?: string;
  /** The NetworkUnavailable condition as podroute wrote it; absent = no such condition yet. */
  networkUnavailable?: 'True' | 'False';
  taints?: ReadonlyArray<{ key: string; value?: string; effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute' }>;
  /** A private DNS name other than `name` (resource-based hostnames). */
  privateDnsName?: string;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const hex = (seed: string, length: number): string => {
  let out = '';
  for (let i = 0; out.length < length; i++) out += createHash('sha256').update(`${seed}#${i}`).digest('hex');
  return out.slice(0, length);
};

const uuid = (seed: string): string => {
  const h = hex(seed, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
};

const BASE_MS = Date.UTC(2026, 10, 30, 8, 0, 0);
const at = (index: number, plusSeconds = 0): string => new Date(BASE_MS + index * 37_000 + plusSeconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The images the kubelet reports on an EKS node running the usual add-ons (name list, size). */
const IMAGES: ReadonlyArray<[string, string, number]> = [
  ['602401143452.dkr.ecr.us-east-1.amazonaws.com/amazon-k8s-cni-init', 'v1.19.5-eksbuild.1', 62_001_311],
  ['602401143452.dkr.ecr.us-east-1.amazonaws.com/amazon-k8s-cni', 'v1.19.5-eksbuild.1', 48_232_174],
  ['602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/kube-proxy', 'v1.31.7-minimal-eksbuild.2', 36_810_502],
  ['602401143452.dkr.ecr.us-east-1.amazonaws.com/amazon/aws-network-policy-agent', 'v1.2.1-eksbuild.1', 31_402_120],
  ['602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/aws-ebs-csi-driver', 'v1.44.0', 32_113_450],
  ['602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/csi-node-driver-registrar', 'v2.13.0-eks-1-33-4', 8_950_221],
  ['602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/livenessprobe', 'v2.15.0-eks-1-33-4', 8_433_117],
  ['602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/coredns', 'v1.11.4-eksbuild.14', 21_950_664],
  ['602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/pod-identity-agent', '0.1.29', 14_002_336],
  ['602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/metrics-server', 'v0.7.2-eksbuild.3', 19_280_008],
  ['public.ecr.aws/eks/aws-load-balancer-controller', 'v2.13.2', 43_771_905],
  ['public.ecr.aws/karpenter/controller', '1.5.0', 52_608_114],
  ['registry.k8s.io/ingress-nginx/controller', 'v1.12.3', 105_347_201],
  ['quay.io/prometheus/node-exporter', 'v1.9.1', 12_650_449],
  ['quay.io/prometheus-operator/prometheus-config-reloader', 'v0.83.0', 15_202_733],
  ['docker.io/fluent/fluent-bit', '4.0.3', 38_519_870],
  ['docker.io/grafana/alloy', 'v1.9.1', 142_560_217],
  ['registry.k8s.io/external-dns/external-dns', 'v0.17.0', 29_876_301],
  ['ghcr.io/aquasecurity/trivy-operator', '0.27.1', 46_009_812],
  ['docker.io/library/nginx', '1.27.5-alpine', 20_994_551],
  ['602401143452.dkr.ecr.us-east-1.amazonaws.com/eks/pause', '3.10', 318_731],
];

function images(): Json[] {
  return IMAGES.map(([repo, tag, size]) => ({ names: [`${repo}@sha256:${hex(`${repo}:${tag}`, 64)}`, `${repo}:${tag}`], sizeBytes: size }))
    .sort((a, b) => (b.sizeBytes as number) - (a.sizeBytes as number));
}

/** The v1 Node a kubelet registers (the body of its CREATE); plain JSON. */
export function kubeletNode(spec: KubeletNodeSpec): { [key: string]: Json } {
  const index = spec.index ?? 0;
  const region = spec.zone.replace(/[a-z]$/, '');
  const instanceType = spec.instanceType ?? 'm5.large';
  const nodegroup = spec.nodegroup ?? 'podroute-workers';
  const dns = spec.privateDnsName ?? spec.name;
  const podCidrs = spec.podCidrs ?? [];
  // Invented but shaped like the real label: AWS maps zone names to zone IDs per account (AWS RAM
  // User Guide, "AZ IDs for your AWS resources"), so no fixed mapping exists; podroute never reads it.
  const zoneId = `use1-az${(spec.zone.charCodeAt(spec.zone.length - 1) - 96) * 2}`;
  const heartbeat = at(index, 3600);
  const started = at(index, 10);
  const conditions: Json[] = [];
  if (spec.networkUnavailable !== undefined) {
    const unavailable = spec.networkUnavailable === 'True';
    conditions.push({
      type: 'NetworkUnavailable',
      status: spec.networkUnavailable,
      reason: unavailable ? 'NoRouteCreated' : 'RouteCreated',
      message: unavailable ? 'RouteController failed to create a route' : 'RouteController created a route',
      lastHeartbeatTime: at(index, 20),
      lastTransitionTime: at(index, 20),
    });
  }
  conditions.push(
    { type: 'MemoryPressure', status: 'False', lastHeartbeatTime: heartbeat, lastTransitionTime: started, reason: 'KubeletHasSufficientMemory', message: 'kubelet has sufficient memory available' },
    { type: 'DiskPressure', status: 'False', lastHeartbeatTime: heartbeat, lastTransitionTime: started, reason: 'KubeletHasNoDiskPressure', message: 'kubelet has no disk pressure' },
    { type: 'PIDPressure', status: 'False', lastHeartbeatTime: heartbeat, lastTransitionTime: started, reason: 'KubeletHasSufficientPID', message: 'kubelet has sufficient PID available' },
    { type: 'Ready', status: 'True', lastHeartbeatTime: heartbeat, lastTransitionTime: at(index, 25), reason: 'KubeletReady', message: 'kubelet is posting ready status' },
  );
  const resources = (allocatable: boolean): Json => ({
    cpu: allocatable ? '1930m' : '2',
    'ephemeral-storage': allocatable ? '18242267924' : '20959212Ki',
    'hugepages-1Gi': '0',
    'hugepages-2Mi': '0',
    memory: allocatable ? '7220152Ki' : '7934904Ki',
    pods: '110',
  });
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      annotations: {
        'alpha.kubernetes.io/provided-node-ip': spec.privateIp,
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
      },
      labels: {
        'beta.kubernetes.io/arch': 'amd64',
        'beta.kubernetes.io/instance-type': instanceType,
        'beta.kubernetes.io/os': 'linux',
        'eks.amazonaws.com/capacityType': 'ON_DEMAND',
        'eks.amazonaws.com/nodegroup': nodegroup,
        'eks.amazonaws.com/nodegroup-image': 'ami-0b8c4e3f5a6d7e9f1',
        'eks.amazonaws.com/sourceLaunchTemplateId': 'lt-0c1d2e3f4a5b6c7d8',
        'eks.amazonaws.com/sourceLaunchTemplateVersion': '1',
        'failure-domain.beta.kubernetes.io/region': region,
        'failure-domain.beta.kubernetes.io/zone': spec.zone,
        'kubernetes.io/arch': 'amd64',
        'kubernetes.io/hostname': spec.name,
        'kubernetes.io/os': 'linux',
        'node.kubernetes.io/instance-type': instanceType,
        'topology.k8s.aws/zone-id': zoneId,
        'topology.kubernetes.io/region': region,
        'topology.kubernetes.io/zone': spec.zone,
      },
      name: spec.name,
    },
    spec: {
      ...(podCidrs.length > 0 ? { podCIDR: podCidrs[0] ?? '', podCIDRs: [...podCidrs] } : {}),
      providerID: `aws:///${spec.zone}/${spec.instanceId}`,
      ...(spec.taints && spec.taints.length > 0 ? { taints: spec.taints.map((t) => ({ ...t })) } : {}),
    },
    status: {
      addresses: [
        { address: spec.privateIp, type: 'InternalIP' },
        { address: dns, type: 'InternalDNS' },
        { address: dns, type: 'Hostname' },
      ],
      allocatable: resources(true),
      capacity: resources(false),
      conditions,
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      features: { supplementalGroupsPolicy: true },
      images: images(),
      nodeInfo: {
        architecture: 'amd64',
        bootID: uuid(`boot/${spec.name}/${index}`),
        containerRuntimeVersion: 'containerd://1.7.27',
        kernelVersion: '6.1.134-152.225.amzn2023.x86_64',
        kubeProxyVersion: 'v1.31.7-eks-473151a',
        kubeletVersion: 'v1.31.7-eks-473151a',
        machineID: hex(`machine/${spec.instanceId}`, 32),
        operatingSystem: 'linux',
        osImage: 'Amazon Linux 2023.7.20250512',
        systemUUID: `ec2${hex(`system/${spec.instanceId}`, 5)}-${hex(`s2/${spec.instanceId}`, 4)}-${hex(`s3/${spec.instanceId}`, 4)}-${hex(`s4/${spec.instanceId}`, 4)}-${hex(`s5/${spec.instanceId}`, 12)}`,
      },
      runtimeHandlers: [
        { features: { recursiveReadOnlyMounts: true, userNamespaces: true }, name: 'runc' },
        { features: { recursiveReadOnlyMounts: true, userNamespaces: true }, name: '' },
      ],
    },
  };
}

/**
 * An EKS Fargate node as EKS registers it: providerID `aws:///<zone>/<task id>/<node name>` (seen in
 * kubernetes/autoscaler#2737), the `eks.amazonaws.com/compute-type: fargate` label and taint, no pod
 * CIDR, no images of its own beyond the pod's.
 */
export function fargateNode(spec: { privateIp: string; zone: string; index?: number }): { [key: string]: Json } {
  const index = spec.index ?? 0;
  const region = spec.zone.replace(/[a-z]$/, '');
  const name = `fargate-ip-${spec.privateIp.replaceAll('.', '-')}.ec2.internal`;
  const taskId = hex(`task/${name}`, 32);
  const heartbeat = at(index, 3600);
  const base = kubeletNode({ name, instanceId: 'i-00000000000000000', zone: spec.zone, privateIp: spec.privateIp, index, instanceType: 'fargate' });
  const metadata = base.metadata as { [key: string]: Json };
  const labels = metadata.labels as { [key: string]: Json };
  for (const key of Object.keys(labels)) if (key.startsWith('eks.amazonaws.com/') || key.includes('instance-type')) delete labels[key];
  labels['eks.amazonaws.com/compute-type'] = 'fargate';
  labels['eks.amazonaws.com/fargate-profile'] = 'fp-default';
  return {
    ...base,
    metadata,
    spec: {
      providerID: `aws:///${spec.zone}/${taskId.slice(0, 10)}-${taskId}/${name}`,
      taints: [{ effect: 'NoSchedule', key: 'eks.amazonaws.com/compute-type', value: 'fargate' }],
    },
    status: {
      ...(base.status as { [key: string]: Json }),
      images: [
        { names: [`602401143452.dkr.ecr.${region}.amazonaws.com/eks/pause@sha256:${hex('fargate-pause', 64)}`], sizeBytes: 318_731 },
      ],
      conditions: (((base.status as { [key: string]: Json }).conditions as Json[]) ?? []).map((c) => ({ ...(c as { [key: string]: Json }), lastHeartbeatTime: heartbeat })),
    },
  };
}
