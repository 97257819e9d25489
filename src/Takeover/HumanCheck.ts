/**
 * Whether the page asks to prove a human is there (a CAPTCHA widget, "verify you are human", characters in an
 * image): the one page-level obstacle the cascade hands to a person rather than back to the agent.
 */
import { Effect } from "effect"
import * as Session from "../Cdp/Session.ts"

/** Words that ask a person to prove they are one: in a page's title, headings, labels or fields. */
export const words =
  /captcha|verify (that )?you are (a )?human|prove you are (a )?human|human verification|not a robot|characters (in|from) the image/i

/** Read in the page: a known CAPTCHA widget, or `words` in the title, headings, labels or fields. */
const expression = `(() => {
  const widgets = 'iframe[src*="recaptcha"], iframe[src*="hcaptcha"], iframe[src*="challenges.cloudflare.com"], iframe[src*="arkoselabs"], iframe[src*="funcaptcha"], iframe[title*="captcha" i], .g-recaptcha, .h-captcha, .cf-turnstile, [data-sitekey]'
  if (document.querySelector(widgets)) return true
  const words = new RegExp(${JSON.stringify(words.source)}, "i")
  const named = Array.from(document.querySelectorAll("h1, h2, h3, legend, label, button, input, textarea, [role=heading]"), (e) =>
    [e.textContent, e.getAttribute("aria-label"), e.getAttribute("placeholder"), e.getAttribute("name"), e.id].join(" ")
  )
  return [document.title, ...named].some((text) => words.test(text))
})()`

/** Whether the page shows a human check; false when it cannot be read (within 2 s). */
export const onPage = (page: Session.PageRun): Effect.Effect<boolean> =>
  page((cdp, sessionId) => Session.evaluateOn<boolean>(cdp, sessionId, expression)).pipe(
    Effect.timeoutOption(2_000),
    Effect.map((found) => found._tag === "Some" && found.value === true),
    Effect.orElseSucceed(() => false)
  )
