/**
 * Allocation under contention against a local DynamoDB (dynalite): 1,000 allocations by 50
 * concurrent allocators (own client, store and set each, one set id) versus 1 allocator doing the
 * same count. Run directly: `node --import tsx bench/allocation.ts` prints one JSON line.
 */
import { pathToFileURL } from 'node:url';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDbCidrStore, type ConditionalWrite } from '../lib/aws/dynamodb-cidr-store.ts';
import { createCidrSet } from '../lib/ipam/index.ts';
import { startLocalDynamoDb as startDynalite, type LocalDynamoDb as LocalDynamo } from '../infra/local/dynamodb.ts';
import { round } from './stats.ts';

export interface AllocationBenchResult {
  allocations: number;
  allocators: number;
  /** Blocks handed to more than one owner (must be 0). */
  duplicates: number;
  /** Writes whose condition failed, per allocation, in the concurrent run. */
  conditionalFailuresPerAllocation: number;
  /** Allocations per second of the concurrent run divided by those of the single allocator. */
  throughputVsSingle: number;
}

export interface AllocationBenchOptions {
  allocations?: number;
  allocators?: number;
  /** Called with details the result leaves out (timings, failures by write, requests). */
  onDetail?: (detail: Record<string, unknown>) => void;
}

interface RunStats {
  ms: number;
  cidrs: string[];
  failures: Record<ConditionalWrite, number>;
  requests: number;
}

/** Counts every request sent by `client`. */
function countRequests(client: DynamoDBClient, count: () => void): DynamoDBClient {
  client.middlewareStack.add(
    (next) => async (args) => {
      count();
      return next(args);
    },
    { step: 'initialize', name: 'benchCountRequests' },
  );
  return client;
}

async function run(local: LocalDynamo, setId: string, allocators: number, allocations: number): Promise<RunStats> {
  const failures: Record<ConditionalWrite, number> = { block: 0, owner: 0, cursor: 0 };
  let requests = 0;
  const sets = await Promise.all(
    Array.from({ length: allocators }, () => {
      const store = new DynamoDbCidrStore({
        client: countRequests(local.client(), () => requests++),
        tableName: local.tableName,
        setId,
        onConditionalFailure: (write) => {
          failures[write] += 1;
        },
      });
      return createCidrSet({ clusterCidr: '10.0.0.0/12', nodeMaskSize: 24, store });
    }),
  );
  const perAllocator = Math.ceil(allocations / allocators);
  const started = performance.now();
  const handed = await Promise.all(
    sets.map(async (set, a) => {
      const cidrs: string[] = [];
      for (let n = 0; n < perAllocator && a * perAllocator + n < allocations; n++) {
        cidrs.push(await set.allocateNext(`node-${a}-${n}`));
      }
      return cidrs;
    }),
  );
  return { ms: performance.now() - started, cidrs: handed.flat(), failures, requests };
}

export async function benchAllocation(options: AllocationBenchOptions = {}): Promise<AllocationBenchResult> {
  const allocations = options.allocations ?? 1000;
  const allocators = options.allocators ?? 50;
  const local = await startDynalite();
  try {
    const single = await run(local, 'bench-single', 1, allocations);
    const many = await run(local, 'bench-many', allocators, allocations);
    const failures = Object.values(many.failures).reduce((sum, n) => sum + n, 0);
    options.onDetail?.({
      singleMs: Math.round(single.ms),
      concurrentMs: Math.round(many.ms),
      singleRequestsPerAllocation: single.requests / allocations,
      concurrentRequestsPerAllocation: many.requests / allocations,
      concurrentFailuresByWrite: many.failures,
      singleFailures: single.failures,
    });
    return {
      allocations: many.cidrs.length,
      allocators,
      duplicates: many.cidrs.length - new Set(many.cidrs).size,
      conditionalFailuresPerAllocation: round(failures / many.cidrs.length, 3),
      throughputVsSingle: round(single.ms / many.ms, 3),
    };
  } finally {
    await local.close();
  }
}

const invoked = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invoked) {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const verbose = process.argv.includes('--detail');
  const result = await benchAllocation({
    ...(verbose ? { onDetail: (detail) => console.error(JSON.stringify(detail)) } : {}),
  });
  console.log(JSON.stringify(result));
}
