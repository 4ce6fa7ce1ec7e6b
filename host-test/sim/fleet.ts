// A fleet of simulated pods named pod-0..pod-(n-1), on consecutive ports from basePort (or free
// ports when basePort is 0/absent). Each pod gets its own seed (seed + index) so jitter and
// sampled lengths differ between pods but the whole fleet is reproducible.
// Failure behaviour: if a pod fails to start (port taken), the started ones are closed and the
// error is rethrown.
import { startSimPod, type SimPod, type SimPodOptions } from "./server.js";

export interface SimFleetOptions extends Omit<SimPodOptions, "name" | "port"> {
  /** First port; pod i listens on basePort + i. 0 or absent = free ports. */
  basePort?: number;
}

export interface SimFleet {
  pods: SimPod[];
  close(): Promise<void>;
}

export async function startSimFleet(n: number, opts: SimFleetOptions = {}): Promise<SimFleet> {
  const { basePort, ...podOptions } = opts;
  const pods: SimPod[] = [];
  const close = async () => {
    await Promise.all(pods.map((pod) => pod.close()));
  };
  try {
    for (let i = 0; i < n; i++) {
      pods.push(
        await startSimPod({
          ...podOptions,
          name: `pod-${i}`,
          port: basePort ? basePort + i : 0,
          seed: (opts.seed ?? 1) + i,
        }),
      );
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { pods, close };
}
