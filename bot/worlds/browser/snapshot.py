"""What the browser world reads from a page in one evaluation: text and an outline of controls.

A game's state is not read here: the page's markup is what our bundled page has and others do
not, so the 2048 board is read by sight (:mod:`bot.worlds.browser.watch_2048`).

The outline lists interactive elements (links, buttons, form fields, ARIA widgets, and elements
styled with a pointer cursor, as games draw their buttons) in document order, each with a ref ("e1", "e2", …) that the page element carries as ``data-clankie-ref`` until
the next observation renumbers them; ``click{ref}`` resolves refs from the last outline.
"""

from __future__ import annotations

from typing import Any

TEXT_LIMIT = 3000
OUTLINE_LIMIT = 50
REF_ATTRIBUTE = "data-clankie-ref"
POINTER_LIMIT = 3000  # elements checked for a pointer cursor (styled controls) per snapshot

SNAPSHOT_JS = """
([textLimit, outlineLimit, refAttr, pointerLimit]) => {
  const clip = (s, n) => (s.length > n ? s.slice(0, n - 1) + "\\u2026" : s);
  const body = document.body;
  let text = body ? body.innerText || "" : "";
  text = text.replace(/[ \\t]+\\n/g, "\\n").replace(/\\n{3,}/g, "\\n\\n").trim();
  const textTruncated = text.length > textLimit;
  text = clip(text, textLimit);

  for (const el of document.querySelectorAll("[" + refAttr + "]")) el.removeAttribute(refAttr);
  const selector = [
    "a[href]", "button", "input:not([type=hidden])", "select", "textarea", "summary",
    "[role=button]", "[role=link]", "[role=checkbox]", "[role=tab]", "[role=menuitem]",
    "[role=option]", "[role=switch]", "[role=textbox]", "[contenteditable=true]",
    "[onclick]", "[tabindex]:not([tabindex='-1'])",
  ].join(",");
  const implicitRole = (el) => {
    const tag = el.tagName.toLowerCase();
    if (tag === "a") return "link";
    if (tag === "button" || tag === "summary") return "button";
    if (tag === "select") return "combobox";
    if (tag === "textarea") return "textbox";
    if (tag === "input") {
      const t = (el.getAttribute("type") || "text").toLowerCase();
      if (["button", "submit", "reset", "image"].includes(t)) return "button";
      if (t === "checkbox" || t === "radio") return t;
      if (t === "range") return "slider";
      return "textbox";
    }
    return tag;
  };
  // Besides what markup calls interactive, an element the page styles as clickable (its own
  // cursor is a pointer, not one inherited from a clickable parent) is a control too: many
  // games make buttons of bare <a> or <div> elements with a click handler.
  const clickable = [];
  let looked = 0;
  for (const el of document.querySelectorAll("body *")) {
    if (el.matches(selector)) { clickable.push(el); continue; }
    if (looked >= pointerLimit) continue;
    looked += 1;
    if (window.getComputedStyle(el).cursor !== "pointer") continue;
    const parent = el.parentElement;
    if (parent && window.getComputedStyle(parent).cursor === "pointer") continue;
    clickable.push(el);
  }
  const outline = [];
  let total = 0;
  for (const el of clickable) {
    const rect = el.getBoundingClientRect();
    const style = window.getComputedStyle(el);
    if (rect.width <= 0 || rect.height <= 0 || style.visibility === "hidden" || style.display === "none") continue;
    total += 1;
    if (outline.length >= outlineLimit) continue;
    const ref = "e" + (outline.length + 1);
    el.setAttribute(refAttr, ref);
    const name = (el.getAttribute("aria-label") || el.innerText || el.value || el.getAttribute("placeholder")
      || el.getAttribute("title") || el.getAttribute("alt") || "").replace(/\\s+/g, " ").trim();
    outline.push({
      ref,
      role: el.getAttribute("role") || implicitRole(el),
      name: clip(name, 80),
      box: [Math.round(rect.x), Math.round(rect.y), Math.round(rect.width), Math.round(rect.height)],
    });
  }

  return {
    url: window.location.href,
    title: document.title,
    text,
    textTruncated,
    outline,
    outlineTotal: total,
    scrollY: Math.round(window.scrollY),
  };
}
"""

TARGET_JS = """
([x, y]) => {
  const el = document.elementFromPoint(x, y);
  if (!el) return null;
  return {
    tag: el.tagName.toLowerCase(),
    id: el.id || null,
    text: (el.innerText || "").replace(/\\s+/g, " ").trim().slice(0, 80),
  };
}
"""


def snapshot_args() -> list[Any]:
    return [TEXT_LIMIT, OUTLINE_LIMIT, REF_ATTRIBUTE, POINTER_LIMIT]
