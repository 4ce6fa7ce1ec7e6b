// A what-if for benchmarks: one shared-data store across every virtual gateway (Envoy replica),
// each replica seeing the others' writes `lagMs` late, as records shared through Redis would be
// (written on a change or a tick, read on a tick). Envoy's shared data is per process: between
// replicas it does not exist, so this measures what sharing predicted_latency's sibling records
// across replicas could gain at a given lag before anyone builds it (bench/RESULTS.md 12.1).
// A replica sees its own writes at once; a key another replica created is seen at once (a slot
// claim by compare-and-set, as Redis's SET NX would be), its content as it was `lagMs` ago (the
// first version when it is younger). Compare-and-set checks the newest version. The shared
// queues (a stream end's wake) stay per replica: a push between replicas does not exist either.
import { WasmResult } from "../../host-test/abi/constants.js";
import type { SharedDataStore } from "../../host-test/abi/shared-data.js";

interface Version { value: Buffer; cas: number; atMs: number; writer: number }

export class ReplicaSharedData {
  private readonly keys = new Map<string, Version[]>();
  private nextCas = 1;

  constructor(private readonly now: () => number, readonly lagMs: number) {}

  /** What replica `writer`'s VMs reach. */
  view(writer: number): SharedDataStore {
    return {
      get: (vmId, key) => this.get(writer, vmId, key),
      set: (vmId, key, value, cas) => this.set(writer, vmId, key, value, cas),
      keys: (vmId) => [...this.keys.keys()].filter((k) => k.startsWith(`${vmId}\0`)).map((k) => k.slice(vmId.length + 1)),
    };
  }

  private get(reader: number, vmId: string, key: string): { status: number; value?: Buffer; cas?: number } {
    const versions = this.keys.get(`${vmId}\0${key}`);
    if (!versions) return { status: WasmResult.NotFound };
    const seenBy = this.now() - this.lagMs;
    let i = versions.length - 1;
    while (i > 0 && versions[i].writer !== reader && versions[i].atMs > seenBy) i--;
    return { status: WasmResult.Ok, value: versions[i].value, cas: versions[i].cas };
  }

  private set(writer: number, vmId: string, key: string, value: Buffer, cas: number): number {
    const k = `${vmId}\0${key}`;
    let versions = this.keys.get(k);
    if (!versions) { versions = []; this.keys.set(k, versions); }
    const newest = versions[versions.length - 1];
    if (newest && cas !== 0 && cas !== newest.cas) return WasmResult.CasMismatch;
    const atMs = this.now();
    versions.push({ value: Buffer.from(value), cas: this.nextCas++, atMs, writer });
    // Versions no reader can see any more go (a reader sees the newest one at least lagMs old).
    while (versions.length > 1 && versions[1].atMs <= atMs - this.lagMs) versions.shift();
    return WasmResult.Ok;
  }
}
