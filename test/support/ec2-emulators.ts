/**
 * EC2 emulators started on demand for a test file, each with an SDK client, all closed after the
 * file's tests:
 *
 *   const startEc2 = useEc2Emulators();
 *   const { ec2, client } = await startEc2({ routeLimit: 2 });
 */
import { EC2Client } from '@aws-sdk/client-ec2';
import { afterAll } from 'vitest';
import { startEc2Emulator, type Ec2Emulator } from '../../infra/local/ec2/index.ts';

type EmulatorOptions = NonNullable<Parameters<typeof startEc2Emulator>[0]>;

export function useEc2Emulators(): (options?: EmulatorOptions) => Promise<{ ec2: Ec2Emulator; client: EC2Client }> {
  const started: Array<{ ec2: Ec2Emulator; client: EC2Client }> = [];
  afterAll(async () => {
    for (const { ec2, client } of started) {
      client.destroy();
      await ec2.close();
    }
  });
  return async (options = {}) => {
    const ec2 = await startEc2Emulator({ throttle: false, ...options });
    const client = new EC2Client({ endpoint: ec2.url, region: 'us-east-1', credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' }, maxAttempts: 1 });
    started.push({ ec2, client });
    return { ec2, client };
  };
}
