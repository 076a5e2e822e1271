/// <reference lib="dom" />
/**
 * The HTML report's page (bundled to dist/report-page.js): reads the payload the CLI wrote into the page and draws
 * the view its `kind` names. A payload that cannot be read is shown as an error, never as a blank page.
 */
import type { ReportPayload } from "../render.js";
import { mountCheckView } from "./check-view.js";
import { PAYLOAD_ELEMENT_ID, ROOT_ELEMENT_ID } from "../ids.js";
import { mountResidencyView } from "./residency-view.js";
import { mountV41View } from "./v41-view.js";

function start(): void {
  const root = document.getElementById(ROOT_ELEMENT_ID) ?? document.body;
  try {
    const payload = JSON.parse(
      document.getElementById(PAYLOAD_ELEMENT_ID)?.textContent ?? "null",
    ) as ReportPayload | null;
    if (payload?.kind === "check") mountCheckView(root, payload);
    else if (payload?.kind === "residency") mountResidencyView(root, payload);
    else if (payload?.kind === "check-v41") mountV41View(root, payload);
    else
      throw new Error(
        `this page holds no dsv4-kv report (payload kind ${String((payload as { kind?: unknown } | null)?.kind)})`,
      );
  } catch (error) {
    const box = document.createElement("p");
    box.className = "input-error";
    box.textContent = `The report could not be drawn: ${error instanceof Error ? error.message : String(error)}`;
    root.replaceChildren(box);
    throw error;
  }
}

start();
