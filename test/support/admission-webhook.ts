/**
 * A mutating admission webhook for the Kubernetes emulator's tests: HTTPS on 127.0.0.1 with the
 * emulator's test certificates (infra/local/kube/tls/), recording each AdmissionReview's request
 * and answering with what `respond` returns as the review's `response`.
 */
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { WebhookTarget } from '../../infra/local/kube/index.ts';

export type ReviewRequest = Record<string, unknown> & { uid: string; name: string; operation: string };

export interface AdmissionWebhook {
  /** Where the emulator sends its reviews: the URL and the CA that signed the server's certificate. */
  target: Required<Pick<WebhookTarget, 'url' | 'caPem'>>;
  /** Every request received, in order; a test may empty it. */
  reviews: ReviewRequest[];
  close(): Promise<void>;
}

const tls = new URL('../../infra/local/kube/tls/', import.meta.url);

export async function startAdmissionWebhook(respond: (request: ReviewRequest) => Record<string, unknown>): Promise<AdmissionWebhook> {
  const reviews: ReviewRequest[] = [];
  const server = https.createServer({ cert: readFileSync(new URL('server.crt', tls)), key: readFileSync(new URL('server.key', tls)) }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { request: ReviewRequest };
      reviews.push(review.request);
      const response = respond(review.request);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    target: { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/mutate`, caPem: readFileSync(new URL('ca.crt', tls), 'utf8') },
    reviews,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
