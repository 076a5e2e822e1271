/**
 * A server setting read from data (a `--config` key, a log's `server_args` key): which SGLang flag and which check
 * flag it names, its value typed as that flag's, and what an unset (None) value means. The config file and the log
 * reader share these, so a key reads the same from both.
 */
import { type SglangFlag, sglangFlag } from "@dsv4-kv/server-config";
import { InputError, UsageError } from "../commands/args.js";
import { flagValueFromData } from "../commands/flags.js";
import { ALL_FLAGS } from "./flags.js";
import { type Value, dsv4FlagOf } from "./launch.js";

export interface ServerSetting {
  /** The SGLang flag the key spells, if any. */
  sglang: SglangFlag | undefined;
  /** The check flag it sets (`model-path` → `model`), or null for a flag the check does not read. */
  dsv4Name: string | null;
}

/**
 * The flag a key names (`tp-size`; the caller turns `tp_size` into that), or null when it names none. `checkOptions`:
 * dsv4-kv's own options count too (a config file may set them; a server's log never does).
 */
export function serverSetting(name: string, checkOptions: boolean): ServerSetting | null {
  const sglang = sglangFlag(name);
  if (sglang) return { sglang, dsv4Name: dsv4FlagOf(sglang) };
  return checkOptions && Object.hasOwn(ALL_FLAGS, name) ? { sglang: undefined, dsv4Name: name } : null;
}

/** What an unset (None) value sets: a None algorithm is a server without drafts; any other None leaves it unset. */
export function unsetValue(dsv4Name: string | null): Value | undefined {
  return dsv4Name === "speculative-algorithm" ? "none" : undefined;
}

/** A value typed by its file (YAML, JSON, a Python repr): checked like the flag, never coerced from a string. */
export function settingValue(
  field: string,
  dsv4Name: string,
  value: unknown,
  where: { file: string; line?: number | null },
) {
  try {
    return flagValueFromData(field, ALL_FLAGS[dsv4Name]!, value)!;
  } catch (error) {
    if (!UsageError.isInstance(error)) throw error;
    const at = where.line === undefined ? where.file : `${where.file}, line ${where.line}`;
    throw new InputError(error.field, error.value, `${error.rule} (in ${at})`, { ...error.params, ...where });
  }
}
