// The programmatic entry: `await main(["check", "--json"], io)` runs a command and resolves to its exit code.
export { main } from "./main.js";
export type { CommandIO } from "./commands/registry.js";
