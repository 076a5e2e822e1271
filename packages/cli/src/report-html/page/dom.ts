/** A small element builder: text children are set as text, never parsed as HTML. */
type Child = Node | string | number | null | undefined | false;

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Readonly<Record<string, string | number | boolean | undefined>> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    node.setAttribute(name, value === true ? "" : String(value));
  }
  append(node, children);
  return node;
}

export function append(node: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
  }
}

/** A chart's frame: a heading, the drawing, and a caption (each chart's title, units and reading). */
export function figure(id: string, title: string, drawing: Child, caption: Child | Child[]): HTMLElement {
  const captions = Array.isArray(caption) ? caption : [caption];
  return el(
    "section",
    { id, class: "chart", "aria-labelledby": `${id}-title` },
    el("h2", { id: `${id}-title` }, title),
    el("figure", {}, drawing, el("figcaption", {}, ...captions)),
  );
}

/** A chart with nothing to draw: its frame with `why` in place of the drawing, and no caption. */
export function emptyFigure(id: string, title: string, why: string): HTMLElement {
  return figure(id, title, el("p", { class: "empty" }, why), "");
}

export const GIB = 2 ** 30;
export const fmtInt = (v: number): string => v.toLocaleString("en-US");
export const fmtGiB = (bytes: number): string => `${(bytes / GIB).toFixed(2)} GiB`;
