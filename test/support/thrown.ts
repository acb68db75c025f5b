/** What `run` throws, or undefined when it returns: for asserting on a synchronous error's fields. */
export function thrownBy(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
}
