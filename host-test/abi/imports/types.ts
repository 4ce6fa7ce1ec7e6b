// Shared shapes for the import builders. Host functions take i32/i64 arguments as numbers/bigints.
export type ImportFn = (...args: any[]) => number | void; // eslint-disable-line @typescript-eslint/no-explicit-any
export type ImportTable = Record<string, ImportFn>;
