/** The page's stylesheet (inline in the HTML: no external font or file). System fonts only. */
export const PAGE_STYLE = `
:root {
  color-scheme: light;
  --ok: #1e7b34;
  --bad: #b00020;
  --warn: #9a6700;
  --ink: #1f2328;
  --muted: #59636e;
  --line: #d0d7de;
}
* { box-sizing: border-box; }
body {
  margin: 0;
  font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  color: var(--ink);
  background: #fff;
}
main { max-width: 1240px; margin: 0 auto; padding: 20px 24px 60px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
code, pre { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
.verdict { font-size: 20px; font-weight: 700; margin: 6px 0; }
.verdict.ok, .ok { color: var(--ok); }
.verdict.bad, .bad { color: var(--bad); }
.provenance { color: var(--muted); margin: 0 0 12px; }
.controls {
  display: grid;
  grid-template-columns: repeat(auto-fill, minmax(220px, 1fr));
  gap: 10px 16px;
  padding: 12px;
  border: 1px solid var(--line);
  border-radius: 6px;
  background: #f6f8fa;
}
.control { display: flex; flex-direction: column; gap: 3px; }
.control label { font-weight: 600; font-size: 13px; }
.control label code { display: block; font-weight: 400; color: var(--muted); font-size: 11px; }
.control input, .control select {
  font: inherit;
  padding: 4px 6px;
  border: 1px solid #8c959f;
  border-radius: 4px;
  background: #fff;
}
.control input[type=checkbox] { width: 20px; height: 20px; }
.control input:focus-visible, .control select:focus-visible, button:focus-visible {
  outline: 3px solid #0969da;
  outline-offset: 1px;
}
.control-error { color: var(--bad); font-size: 12px; }
[aria-invalid=true] { border-color: var(--bad) !important; }
#reset {
  align-self: end;
  font: inherit;
  padding: 6px 10px;
  border: 1px solid #8c959f;
  border-radius: 4px;
  background: #fff;
  cursor: pointer;
}
.input-error {
  border: 2px solid var(--bad);
  background: #fff5f5;
  border-radius: 6px;
  padding: 10px 14px;
  margin: 10px 0;
}
.input-error dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 6px 0 0; }
.input-error dt { font-weight: 600; }
.input-error dd { margin: 0; font-family: ui-monospace, Menlo, Consolas, monospace; }
.issues { list-style: none; padding: 0; margin: 0; }
.issue { border-left: 4px solid var(--bad); padding: 6px 12px; margin: 8px 0; background: #fff8f8; }
.issue.warning { border-color: #d4a72c; background: #fffbea; }
.issue .rule { font-family: ui-monospace, Menlo, Consolas, monospace; font-weight: 700; margin-right: 8px; }
.issue .severity { text-transform: uppercase; font-size: 11px; color: var(--muted); }
.issue p { margin: 4px 0; }
.issue .fix { color: #0b3d0b; }
.chart figure { margin: 0; overflow-x: auto; }
.chart figcaption { color: var(--muted); font-size: 13px; max-width: 980px; margin-top: 6px; }
.chart svg { overflow: visible; }
.empty { color: var(--muted); font-style: italic; }
.proofs { margin: 8px 0 0; padding-left: 20px; }
table.args { border-collapse: collapse; width: 100%; font-size: 13px; }
table.args th, table.args td {
  text-align: left;
  padding: 3px 8px;
  border-bottom: 1px solid #eaeef2;
  vertical-align: top;
}
table.args td:first-child { font-family: ui-monospace, Menlo, Consolas, monospace; white-space: nowrap; }
table.args tr.note td:last-child { color: #0a3069; }
pre { background: #f6f8fa; padding: 12px; overflow-x: auto; border-radius: 6px; }
`;
