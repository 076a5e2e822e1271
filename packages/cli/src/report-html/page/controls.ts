/**
 * The check page's controls: native, labelled <select> and <input> elements for the flags people vary. A value is
 * parsed by the CLI's flag table (the page refuses what the CLI refuses); a refusal is shown next to the control.
 */
import { Dsv4KvError } from "@dsv4-kv/errors";
import { type CheckReport, MODEL_PRESETS } from "@dsv4-kv/server-config";
import { ALL_FLAGS } from "../../check/flags.js";
import type { Value } from "../../check/launch.js";
import { checkValueFromText } from "../../check/pipeline.js";
import type { CheckPayload } from "../check-payload.js";
import { CONTROL_FLAGS } from "./check-state.js";
import { el } from "./dom.js";

export interface Control {
  flag: string;
  /** Shows `value` (the setting in force), else what the check resolved. */
  show(value: Value | undefined, report: CheckReport): void;
}

export interface Controls {
  elements: HTMLElement[];
  controls: Control[];
}

/** `onChange(flag, value)`: a parsed value, or undefined when the control was cleared (the CLI's input applies). */
export type OnChange = (flag: string, value: Value | undefined) => void;

const CHOICES: Readonly<Record<string, readonly string[]>> = {
  "speculative-algorithm": ["EAGLE", "DSPARK", "none"],
  "compress-state-dtype": ["float32", "bfloat16"],
};

const LABELS: Readonly<Record<string, string>> = {
  model: "Model",
  "tp-size": "Tensor-parallel ranks",
  "dp-size": "Data-parallel size",
  "speculative-num-draft-tokens": "Draft tokens per verify",
  "speculative-algorithm": "Speculative algorithm",
  "mem-fraction-static": "Static memory fraction",
  "kv-budget-bytes": "KV budget (bytes)",
  "online-compress": "Online compress (c128)",
  "compress-state-dtype": "Compress-state dtype",
  "context-length": "Context length",
};

/** What the check resolved for a flag, shown when no value is set. */
function resolvedValue(flag: string, r: CheckReport): string | boolean {
  const d = r.derived;
  switch (flag) {
    case "model":
      return r.model.name;
    case "tp-size":
      return String(r.args.tpSize);
    case "dp-size":
      return String(r.args.dpSize);
    case "speculative-num-draft-tokens":
      return d.isSpeculative ? String(d.draftTokens) : "";
    case "speculative-algorithm":
      return d.speculativeAlgorithm ?? "none";
    case "mem-fraction-static":
      return r.budget.memFractionStatic == null ? "" : String(r.budget.memFractionStatic);
    case "online-compress":
      return d.onlineC128;
    case "compress-state-dtype":
      return r.args.compressStateDtype;
    default:
      return "";
  }
}

export function controlsFor(payload: CheckPayload, onChange: OnChange): Controls {
  const elements: HTMLElement[] = [];
  const controls: Control[] = [];
  for (const flag of CONTROL_FLAGS) {
    const id = `control-${flag}`;
    const message = el("span", { class: "control-error", id: `${id}-error`, "aria-live": "polite" });
    const field = inputFor(flag, id, payload);
    field.setAttribute("name", flag);
    field.setAttribute("aria-describedby", `${id}-error`);
    const apply = () => {
      message.textContent = "";
      field.removeAttribute("aria-invalid");
      try {
        onChange(flag, readValue(flag, field));
      } catch (error) {
        if (!Dsv4KvError.isInstance(error)) throw error;
        message.textContent = (error as Dsv4KvError).message;
        field.setAttribute("aria-invalid", "true");
      }
    };
    field.addEventListener("change", apply);
    elements.push(
      el(
        "div",
        { class: "control" },
        el("label", { for: id }, LABELS[flag] ?? flag, " ", el("code", {}, `--${flag}`)),
        field,
        message,
      ),
    );
    controls.push({
      flag,
      show(value, report) {
        if (document.activeElement === field && field.getAttribute("aria-invalid") === "true") return;
        const shown = value === undefined ? resolvedValue(flag, report) : value;
        if (field instanceof HTMLInputElement && field.type === "checkbox") field.checked = shown === true;
        else if (flag === "model" && value === undefined)
          field.value = payload.inputs.model.source === "custom" ? "" : report.model.name;
        else field.value = typeof shown === "boolean" ? String(shown) : String(shown);
        if (flag === "context-length" && field instanceof HTMLInputElement)
          field.placeholder = String(report.derived.contextLen);
        if (flag === "kv-budget-bytes" && field instanceof HTMLInputElement && report.budget.availableBytes != null)
          field.placeholder = `GPU budget: ${(report.budget.availableBytes / 2 ** 30).toFixed(2)} GiB`;
      },
    });
  }
  return { elements, controls };
}

function inputFor(flag: string, id: string, payload: CheckPayload): HTMLInputElement | HTMLSelectElement {
  if (flag === "model") {
    const select = el("select", { id });
    if (payload.inputs.model.source === "custom")
      select.append(el("option", { value: "" }, `${payload.inputs.model.model.name} (the CLI's custom model)`));
    for (const name of Object.keys(MODEL_PRESETS)) select.append(el("option", { value: name }, name));
    return select;
  }
  const choices = CHOICES[flag];
  if (choices) {
    const select = el("select", { id });
    for (const c of choices) select.append(el("option", { value: c }, c));
    return select;
  }
  const spec = ALL_FLAGS[flag]!;
  if (spec.type === "bool") return el("input", { id, type: "checkbox" });
  if (spec.type === "int")
    return el("input", { id, type: "number", min: spec.min, max: spec.max, step: 1, inputmode: "numeric" });
  if (spec.type === "number")
    return el("input", { id, type: "number", min: spec.min, max: spec.max, step: "any", inputmode: "decimal" });
  return el("input", { id, type: "text" });
}

/** The control's value, parsed as the CLI parses it; undefined when cleared. */
function readValue(flag: string, field: HTMLInputElement | HTMLSelectElement): Value | undefined {
  if (field instanceof HTMLInputElement && field.type === "checkbox") return field.checked;
  const text = field.value;
  if (text === "") return undefined;
  return checkValueFromText(`--${flag}`, flag, text);
}
