// What the other packages of this repository share with this one. Released in step with them (one changesets
// fixed group, docs/decisions.md#d36-internal-subpaths-are-released-in-step); no promise to anyone else.
// The steppable scenario behind `dsv4-kv simulate compress` (its time limit and progress).
export { CompressScenarioRun } from "./scenario/run.js";
export { Ratio2ScenarioRun } from "./scenario/ratio2-run.js";
