/**
 * The settings a command takes either as a flag or from the environment: `--cluster-name` stands
 * for CLUSTER_NAME (lib/config.ts), and a flag given wins.
 */
import type { CliIo, Flags } from './main.ts';

const SETTINGS = {
  mode: 'MODE',
  'cluster-name': 'CLUSTER_NAME',
  'cluster-cidrs': 'CLUSTER_CIDRS',
  'route-table-ids': 'ROUTE_TABLE_IDS',
  'node-selector': 'NODE_SELECTOR',
  'node-sync-mode': 'NODE_SYNC_MODE',
  'node-mask-size-ipv4': 'NODE_MASK_SIZE_IPV4',
  'node-mask-size-ipv6': 'NODE_MASK_SIZE_IPV6',
  'queue-url': 'QUEUE_URL',
  'cidr-table-name': 'CIDR_TABLE_NAME',
} as const;

export type ConfigFlag = keyof typeof SETTINGS;

/** These flags' settings by environment name: each flag's value, else the environment's. */
export function configFromFlags(flags: Flags, env: CliIo['env'], names: readonly ConfigFlag[]): Record<string, string | undefined> {
  return Object.fromEntries(names.map((name) => [SETTINGS[name], flags.string(name) ?? env[SETTINGS[name]]]));
}
