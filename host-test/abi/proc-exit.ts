// The WASI proc_exit unwinding error, in its own file so imports/wasi.ts need not import vm.ts
// (which builds the import table: an import circle otherwise).

/** Thrown by the WASI proc_exit import to unwind the guest; never escapes `invoke`. */
export class ProcExit extends Error {
  constructor(readonly code: number) { super(`proc_exit(${code})`); }
}
