// What a policy's decide() tells the stream.
export const enum Verdict {
  /** No opinion: the route's own load balancing picks (no override). */
  Pass = 0,
  /** A host was chosen synchronously (stream.pickedHost). */
  Picked = 1,
  /** Waiting for Redis; the policy resumes the stream from the reply callback. */
  Pending = 2,
  /** A local response was sent (shed). */
  Rejected = 3,
}
