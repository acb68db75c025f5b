/** An EC2 API error as the Query protocol reports it. */
export class Ec2ApiError extends Error {
  override name = 'Ec2ApiError';
  constructor(
    readonly code: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}
