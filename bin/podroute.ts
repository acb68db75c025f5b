#!/usr/bin/env node
// The podroute command: every command lives in lib/cli/; lib/cli/process.ts binds them to this process.
import { runPodroute } from '../lib/cli/process.ts';

await runPodroute();
