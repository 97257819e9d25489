/**
 * Screenshots without typed text: scripts a page evaluates before a capture to hide the text of every text-like
 * input (in the document, its open shadow roots and the frames of its origin), and after it to show it again. The
 * mask changes paint only (no layout, no values), so work on the DOM may run while it is on. A frame of another origin
 * runs in its own process, out of these scripts' reach: what is typed there is not masked.
 */

const maskId = "switchyard-mask"
const maskCss =
  'input:not([type=checkbox i]):not([type=radio i]):not([type=button i]):not([type=submit i]):not([type=reset i]):not([type=image i]):not([type=range i]):not([type=color i]):not([type=file i]), textarea, [contenteditable]:not([contenteditable="false" i]), [contenteditable] *, [role=textbox], [role=searchbox] { color: transparent !important; -webkit-text-fill-color: transparent !important; text-shadow: none !important; caret-color: transparent !important; }'

/** Collects the document, its open shadow roots and the documents of its same-origin frames (with theirs), where a
 * document's stylesheet does not reach. */
const rootsSource = `const roots = [document];
    for (let i = 0; i < roots.length; i++) {
      for (const el of roots[i].querySelectorAll("*")) {
        if (el.shadowRoot) roots.push(el.shadowRoot);
        if (el.tagName === "IFRAME" || el.tagName === "FRAME") {
          let inner = null;
          try { inner = el.contentDocument; } catch (e) {}
          if (inner) roots.push(inner);
        }
      }
    }`

/** The mask's stylesheet for the document `root` belongs to: a constructed sheet is adopted only in its own document. */
const sheetSource = `const key = Symbol.for("${maskId}");
    const sheetOf = (root, make) => {
      const doc = root.nodeType === 9 ? root : root.ownerDocument;
      const win = doc && doc.defaultView;
      if (!win) return undefined;
      let sheet = win[key];
      if (sheet === undefined && make && typeof win.CSSStyleSheet === "function" && "replaceSync" in win.CSSStyleSheet.prototype) {
        sheet = new win.CSSStyleSheet();
        sheet.replaceSync(${JSON.stringify(maskCss)});
        Object.defineProperty(win, key, { value: sheet, configurable: true });
      }
      return sheet;
    }`

/** JS to evaluate in a page before a screenshot: hides the text of every text-like input. Idempotent; never throws. */
export const maskInputsScript = `(() => {
  try {
    ${sheetSource}
    ${rootsSource}
    for (const root of roots) {
      const sheet = sheetOf(root, true);
      if (sheet && Array.isArray(root.adoptedStyleSheets) && !root.adoptedStyleSheets.includes(sheet)) {
        root.adoptedStyleSheets = [...root.adoptedStyleSheets, sheet];
      }
    }
    const parent = document.head || document.documentElement;
    if (parent && !document.getElementById("${maskId}")) {
      const style = document.createElement("style");
      style.id = "${maskId}";
      style.textContent = ${JSON.stringify(maskCss)};
      parent.appendChild(style);
    }
    return true;
  } catch (e) {
    return false;
  }
})()`

/** Elements whose own text the mask hides, by the same rule as its stylesheet (without the descendant part). */
const maskedSelector = maskCss.slice(0, maskCss.indexOf("{")).replace(", [contenteditable] *", "")

/**
 * JS that tells whether the mask would hide anything: true when no text-like input shown holds a value and no
 * editable element or textbox shows text (in the document, its open shadow roots and same-origin frames). A page with nothing typed is captured
 * as it is, without the two style changes (and repaints) of masking it; false when it cannot tell.
 */
export const nothingTypedScript = `(() => {
  try {
    ${rootsSource}
    for (const root of roots) {
      for (const el of root.querySelectorAll(${JSON.stringify(maskedSelector)})) {
        const field = el.tagName === "INPUT" || el.tagName === "TEXTAREA";
        // A hidden input's value (a form token) is never painted.
        if (field && el.type === "hidden") continue;
        if (field ? el.value !== "" : (el.textContent || "").trim() !== "") return false;
      }
    }
    return true;
  } catch (e) {
    return false;
  }
})()`

/**
 * JS that masks the page only when something is typed: `true` when nothing is (the page is left as it is), else it
 * puts the mask on and answers `false`. One round trip where asking and then masking would take two.
 */
export const maskIfTypedScript = `(() => {
  if (${nothingTypedScript}) return true;
  ${maskInputsScript};
  return false;
})()`

/** JS that undoes `maskInputsScript`. Idempotent; never throws. */
export const unmaskInputsScript = `(() => {
  try {
    ${sheetSource}
    ${rootsSource}
    for (const root of roots) {
      const sheet = sheetOf(root, false);
      if (sheet && Array.isArray(root.adoptedStyleSheets) && root.adoptedStyleSheets.includes(sheet)) {
        root.adoptedStyleSheets = root.adoptedStyleSheets.filter((s) => s !== sheet);
      }
    }
    for (const style of document.querySelectorAll("style#${maskId}")) style.remove();
    return true;
  } catch (e) {
    return false;
  }
})()`

/**
 * JS that tells where typed text shows, for masking a picture taken without the mask: `{ ratio, boxes, other }`, the
 * device pixel ratio, each text-like input or textarea holding a value as `[x, y, width, height]` in the top
 * viewport's CSS pixels (frames of its origin offset by their place), and whether text shows anywhere a box cannot
 * bound (an editable element or a textbox, whose text may paint past its box). `null` when it cannot tell.
 */
export const typedBoxesScript = `(() => {
  try {
    ${rootsSource}
    const boxes = [];
    let other = false;
    for (const root of roots) {
      const doc = root.nodeType === 9 ? root : root.ownerDocument;
      let x = 0, y = 0;
      for (let w = doc.defaultView; w && w !== window; w = w.parent) {
        const frame = w.frameElement;
        if (!frame) return null;
        const r = frame.getBoundingClientRect();
        x += r.left + frame.clientLeft;
        y += r.top + frame.clientTop;
      }
      for (const el of root.querySelectorAll(${JSON.stringify(maskedSelector)})) {
        const field = el.tagName === "INPUT" || el.tagName === "TEXTAREA";
        if (field && el.type === "hidden") continue;
        if (field ? el.value === "" : (el.textContent || "").trim() === "") continue;
        if (!field) { other = true; continue; }
        const r = el.getBoundingClientRect();
        if (r.width > 0 && r.height > 0) boxes.push([x + r.left, y + r.top, r.width, r.height]);
      }
    }
    return { ratio: window.devicePixelRatio, boxes, other };
  } catch (e) {
    return null;
  }
})()`
