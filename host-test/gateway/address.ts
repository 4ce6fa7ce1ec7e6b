// "ip:port" / "[v6]:port" -> { host, port }. Inputs were validated by config.ts; never throws.
export function splitAddress(address: string): { host: string; port: number } {
  const i = address.lastIndexOf(":");
  const host = address.slice(0, i).replace(/^\[(.*)\]$/, "$1");
  return { host, port: Number(address.slice(i + 1)) };
}
