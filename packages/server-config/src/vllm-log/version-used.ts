/**
 * Which vLLM's sizing a log is reconciled with (docs/decisions.md D45): `--vllm-version` when given, else the version
 * the log printed, else the default. A printed version dsv4-kv does not model (before 0.23, or not a release string)
 * falls back to the default and says so; a flag that selects another behaviour than the log's version is a warning
 * naming both, since the flag still wins.
 */
import { ServerConfigError } from "../errors.js";
import { DEFAULT_VLLM_VERSION, type VllmVersionBehaviour, vllmVersionBehaviour } from "../vllm/versions.js";
import type { ParsedVllmLog, VllmVersionUsed } from "./types.js";

/** The behaviour of a printed version, or the reason it is not one dsv4-kv models. */
function loggedBehaviour(text: string): { behaviour: VllmVersionBehaviour } | { refused: string } {
  try {
    return { behaviour: vllmVersionBehaviour(text, "version") };
  } catch (error) {
    if (!ServerConfigError.isInstance(error)) throw error;
    return { refused: error.rule };
  }
}

export function versionUsed(parsed: ParsedVllmLog, flag: string | undefined): VllmVersionUsed {
  const logged = parsed.version?.text ?? null;
  const fromLog = logged === null ? null : loggedBehaviour(logged);
  if (flag !== undefined) {
    const behaviour = vllmVersionBehaviour(flag, "--vllm-version");
    const used: VllmVersionUsed = { version: flag, from: "flag", logVersion: logged, behaviour };
    if (fromLog === null || !("behaviour" in fromLog) || fromLog.behaviour.id === behaviour.id) return used;
    const warning = {
      id: "version-flag-differs" as const,
      text:
        `--vllm-version ${flag} sizes as vLLM ${behaviour.id}, but the log printed vLLM ${logged} ` +
        `(sized as ${fromLog.behaviour.id}); the flag wins`,
    };
    return { ...used, warning };
  }
  if (fromLog !== null && "behaviour" in fromLog)
    return { version: logged!, from: "log", logVersion: logged, behaviour: fromLog.behaviour };
  const behaviour = vllmVersionBehaviour(DEFAULT_VLLM_VERSION);
  const used: VllmVersionUsed = { version: DEFAULT_VLLM_VERSION, from: "default", logVersion: logged, behaviour };
  if (fromLog === null) return used;
  const text = `the log's vLLM ${logged} is not one dsv4-kv sizes (it ${fromLog.refused}): the default is used`;
  return { ...used, warning: { id: "version-not-modelled", text } };
}
