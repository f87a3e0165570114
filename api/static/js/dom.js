// Building DOM nodes from data without innerHTML, so names from the API are never markup.

/** h("div", {class: "x", onclick: f}, child, "text", [more]) */
export function h(tag, attrs = {}, ...children) {
  const node = document.createElementNS(
    tag === "svg" || SVG_TAGS.has(tag) ? "http://www.w3.org/2000/svg" : "http://www.w3.org/1999/xhtml",
    tag,
  );
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      node.addEventListener(key.slice(2), value);
    } else if (key === "style" && typeof value === "object") {
      Object.assign(node.style, value);
    } else {
      node.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(node, children);
  return node;
}

const SVG_TAGS = new Set(["rect", "line", "polyline", "text", "g", "title", "path", "circle"]);

function append(node, children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(node, child);
    else node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replace a panel body's content. */
export function fill(id, ...children) {
  const target = document.getElementById(id);
  if (target) target.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined));
}

/** A <colgroup> giving a fixed-layout table's columns their widths ("30%", ...). */
export function cols(...widths) {
  return h("colgroup", {}, widths.map((width) => h("col", { style: { width } })));
}

export function empty(text) {
  return h("p", { class: "empty" }, text);
}
