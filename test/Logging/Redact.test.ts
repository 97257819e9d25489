/**
 * Redaction: every built-in pattern with realistic positives and the look-alikes that must survive, URLs, deep values,
 * configuration, canaries, and properties (idempotence; generated emails and card numbers never survive).
 */
import { assert, describe, it } from "@effect/vitest"
import { Arbitrary, Schema } from "effect"
import * as Redact from "../../src/Logging/Redact.ts"

const r = Redact.defaultRedactor

/** Asserts that redacting `input` gives `expected`, and that redacting again changes nothing. */
const redacts = (input: string, expected: string, redactor = r) => {
  const once = redactor.text(input)
  assert.strictEqual(once, expected, `redacting ${JSON.stringify(input)}`)
  assert.strictEqual(redactor.text(once), once, `redacting ${JSON.stringify(once)} again`)
}
const survives = (input: string) => assert.strictEqual(r.text(input), input, `${JSON.stringify(input)} was changed`)

describe("Redact.text: built-in patterns", () => {
  it("email", () => {
    redacts("contact bob.smith+shop@example.co.uk today", "contact [redacted:email] today")
    redacts("<ANNA_K@mail-server.example.org>", "<[redacted:email]>")
    redacts("mailto:jo@x.io?subject=hi", "mailto:[redacted:email]?subject=hi")
    redacts("encoded jo%40example.com", "encoded [redacted:email]")
    for (const s of ["effect@4.1.0", "playwright-core@1.65.1", "@effect/vitest", "root@localhost", "a @ b.com"])
      survives(s)
  })

  it("phone: international and US formats", () => {
    redacts("call +1 (555) 123-4567 now", "call [redacted:phone] now")
    redacts("+44 20 7946 0958", "[redacted:phone]")
    redacts("+49 (0) 30 1234567", "[redacted:phone]")
    redacts("tel:+15551234567", "tel:[redacted:phone]")
    redacts("office 555-123-4567, cell (555) 987-6543", "office [redacted:phone], cell [redacted:phone]")
    redacts("fax 555.123.4567", "fax [redacted:phone]")
    redacts("1-800-555-1234", "[redacted:phone]")
    redacts('"phone": "5551234567"', '"phone": "[redacted:phone]"')
    redacts("Mobile no: 07700 900123", "Mobile no: [redacted:phone]")
    for (const s of [
      "+20 points",
      "2026-02-21T10:11:12+01:00",
      "2026-02-21T10:11:12+0100",
      "port 9222",
      "5551234567 is a bare number",
      "1700000000",
      "v1.65.1",
      "192.168.100.200",
      "+1.65.1"
    ]) {
      survives(s)
    }
  })

  it("card numbers are Luhn-checked", () => {
    redacts("visa 4111 1111 1111 1111.", "visa [redacted:card].")
    redacts("mc 5555-5555-5555-4444", "mc [redacted:card]")
    redacts("plain 4242424242424242", "plain [redacted:card]")
    redacts("amex 3782 822463 10005", "amex [redacted:card]")
    redacts("qty 12 4111 1111 1111 1111 ok", "qty 12 [redacted:card] ok")
    redacts("cards 4111111111111111 and 5555555555554444", "cards [redacted:card] and [redacted:card]")
    for (const s of [
      "4111 1111 1111 1112", // fails Luhn
      "1700000000123", // epoch milliseconds
      "ts=1771668672345",
      "0000 0000 0000 0000",
      "2026-02-21 2026-02-22",
      "12345678901234567890123", // too long
      "order 1234 5678"
    ]) {
      survives(s)
    }
  })

  it("national ids: US SSN, UK NI, labelled ids", () => {
    redacts("SSN 123-45-6789", "SSN [redacted:ssn]")
    redacts("ssn: 123456789", "ssn: [redacted:national_id]")
    redacts("NI number AB123456C", "NI number [redacted:uk_ni]")
    redacts("ni JG 12 34 56 A", "ni [redacted:uk_ni]")
    redacts("passport: X1234567", "passport: [redacted:national_id]")
    redacts('"passportNumber": "533380006"', '"passportNumber": "[redacted:national_id]"')
    redacts("Driver's license no. D1234-5678", "Driver's license no. [redacted:national_id]")
    for (const s of ["000-12-3456", "666-12-3456", "2026-02-21", "license: MIT", "passport 2024", "AB12"]) survives(s)
  })

  it("bearer tokens and JWTs", () => {
    redacts("Bearer abc123def456ghi789", "Bearer [redacted:bearer]")
    redacts("bearer ya29.a0AfH6SMBx-y_z", "bearer [redacted:bearer]")
    const jwt =
      "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
    redacts(`id_token ${jwt} end`, "id_token [redacted:jwt] end")
    redacts(`Bearer ${jwt}`, "Bearer [redacted:jwt]")
    for (const s of ["bearer authentication", "Bearer token", "token_type=bearer"]) survives(s)
  })

  it("API keys by prefix, and long values after key-like labels", () => {
    const keys = [
      "sk-proj-Abc123def456ghi789jkl012mno",
      "sk-ant-api03-AbCdEf1234567890_ghIJkl-mn",
      "sk-1234567890abcdefghijklmnop",
      "AKIAIOSFODNN7EXAMPLE",
      "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
      "xoxb-123456789012-1234567890123-AbCdEfGh",
      "AIzaSyA1234567890abcdefghijklmnopqrstuv",
      "sk_live_4eC39HqLyjWDarjtT1zdp7dc",
      "bb_live_abcdefghij1234567890"
    ]
    for (const key of keys) redacts(`key ${key} used`, "key [redacted:api_key] used")
    redacts("api_key=0123456789abcdef0123", "api_key=[redacted:secret]")
    redacts('{"token": "AbCdEf1234567890"}', '{"token": "[redacted:secret]"}')
    redacts('{"csrfToken":"f3a9c2d1e8b7"}', '{"csrfToken":"[redacted:secret]"}')
    redacts("client_secret: s3cr3t-v4lue-xyz", "client_secret: [redacted:secret]")
    redacts("Authorization: Basic dXNlcjpwYXNzd29yZA==\nnext line", "Authorization: [redacted:secret]\nnext line")
    redacts('"cookie": "sid=abc; theme=dark"', '"cookie": "[redacted:secret]"')
    for (const s of [
      "task-list-item-12345678901234567890",
      "desk-1234567890abcdefghijk",
      "token: short",
      '"tokenCount": 12345678',
      '"inputTokens": 123456789',
      "credentials: include",
      "sk-learn"
    ]) {
      survives(s)
    }
  })

  it("password fields in text, JSON and escaped JSON", () => {
    redacts("password: hunter2", "password: [redacted:password]")
    redacts("user=bob&password=hunter2&remember=1", "user=bob&password=[redacted:password]&remember=1")
    redacts('{"password":"correct horse battery"}', '{"password":"[redacted:password]"}')
    redacts('{\\"newPassword\\":\\"hunter2\\"}', '{\\"newPassword\\":\\"[redacted:password]\\"}')
    redacts("passwordConfirmation='x y'", "passwordConfirmation='[redacted:password]'")
    redacts('"password": ""', '"password": ""')
  })

  it("typed text in instructions and DOM/aria snapshots", () => {
    redacts('fill "Email" with "bob@example.com"', 'fill "Email" with "[redacted:typed]"')
    redacts("fill Full name with Grace Hopper", "fill Full name with [redacted:typed]")
    redacts("type 'hello world' into \"Search\"", "type '[redacted:typed]' into \"Search\"")
    redacts('<input type="text" name="q" value="my search">', '<input type="text" name="q" value="[redacted:input]">')
    redacts("<input value=abc type=password>", "<input value=[redacted:password] type=password>")
    redacts("<textarea id=n>private notes</textarea>", "<textarea id=n>[redacted:input]</textarea>")
    redacts(
      '- textbox "Email" [ref=e5]: jo@x.io\n- button "Go"',
      '- textbox "Email" [ref=e5]: [redacted:input]\n- button "Go"'
    )
    for (const s of [
      '<input type="submit" value="Sign in">',
      '<input type="text" value="">',
      '- button "Submit": Submit',
      "type: retryable",
      'click "Submit"'
    ]) {
      survives(s)
    }
  })

  it("leaves ordinary log content alone", () => {
    for (const s of [
      "2026-02-21T10:11:12.345Z",
      "2026-02-21 10:11:12",
      "ws://127.0.0.1:9222/devtools/browser/5f1e6c52-4b2a-4c8e-9a53-0c2d8e1f7b3a",
      "127.0.0.1:9222",
      "localhost:3000",
      "playwright 1.65.1",
      "node v24.21.0",
      "traceId 550e8400-e29b-41d4-a716-446655440000",
      "trace 4bf92f3577b34da6a3ce929d0e0e4736 span 00f067aa0ba902b7",
      "uuid 12345678-1234-4123-8123-123456789012",
      "durationMs 12345 attempt 2 of 3",
      "sessionId 8A3F5C2E9B1D4F6A",
      "status 404, 3 retries, 250 ms",
      '{"outcome":"failure","reason":"timeout after 30000 ms","retryable":true}',
      "https://example.com/products/item-42",
      "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    ]) {
      survives(s)
    }
  })

  // Catastrophic backtracking would show as the test's timeout, not as a wall-clock assertion.
  it("redacts every line of 100 KB, not only the first ones", () => {
    const line =
      '{"ts":"2026-02-21T10:11:12.345Z","msg":"went to https://shop.example.com/cart?item=42 as bob@example.com, card 4111 1111 1111 1111, v1.65.1"}\n'
    const lines = Math.ceil(100_000 / line.length)
    const out = r.text(line.repeat(lines))
    assert.notInclude(out, "bob@example.com")
    assert.notInclude(out, "4111 1111 1111 1111")
    assert.strictEqual(out.split("\n").filter((l) => l.includes("v1.65.1")).length, lines)
  })
})

describe("Redact.url", () => {
  it("replaces query values, fragment parameters and userinfo; keeps scheme, host, port and path", () => {
    assert.strictEqual(
      r.url("https://user:hunter2@shop.example.com:8443/a/b?q=shoes&token=abc#access_token=xyz&state=1"),
      "https://[redacted:userinfo]@shop.example.com:8443/a/b?q=[redacted:query]&token=[redacted:query]#access_token=[redacted:query]&state=[redacted:query]"
    )
    assert.strictEqual(
      r.url("https://example.com/cb#/done?code=abc"),
      "https://example.com/cb#/done?code=[redacted:query]"
    )
    assert.strictEqual(r.url("https://example.com/docs#section-2"), "https://example.com/docs#section-2")
    assert.strictEqual(r.url("/search?q=secret&flag"), "/search?q=[redacted:query]&flag")
    assert.strictEqual(r.url("https://example.com/?a=&b"), "https://example.com/?a=&b")
    assert.strictEqual(r.url("about:blank"), "about:blank")
    assert.strictEqual(r.url("https://example.com/users/jo@x.io/"), "https://example.com/users/[redacted:email]/")
  })

  it("keeps allowed parameters (still through the patterns)", () => {
    const redactor = Redact.make({ keepQueryParams: ["page", "Sort"] })
    assert.strictEqual(
      redactor.url("https://x.com/list?page=2&sort=asc&user=jo@x.io&q=a"),
      "https://x.com/list?page=2&sort=asc&user=[redacted:query]&q=[redacted:query]"
    )
    assert.strictEqual(redactor.url("https://x.com/?page=jo@x.io"), "https://x.com/?page=[redacted:email]")
  })

  it("finds URLs inside text, without eating trailing punctuation", () => {
    redacts(
      "navigated to https://x.com/login?next=/home&sid=42. Then (see https://y.org/?a=b), done",
      "navigated to https://x.com/login?next=[redacted:query]&sid=[redacted:query]. Then (see https://y.org/?a=[redacted:query]), done"
    )
    redacts('{"url":"https://x.com/?t=1","n":2}', '{"url":"https://x.com/?t=[redacted:query]","n":2}')
  })
})

describe("Redact.value", () => {
  it("redacts sensitive keys at any depth, keeps everything else", () => {
    const input = {
      user: "bob",
      password: "hunter2",
      headers: { Authorization: "Bearer abc", "set-cookie": ["a=1", "b=2"], "x-api-key": "k", accept: "text/html" },
      nested: { deeper: { apiKey: "k1", client_secret: 42, pin: 1234, cvv: "123", ssn: "123-45-6789", author: "Ann" } },
      usage: { inputTokens: 1234, outputTokens: 56 },
      cookiesEnabled: true,
      password2: null
    }
    assert.deepStrictEqual(r.value(input), {
      user: "bob",
      password: "[redacted:password]",
      headers: {
        Authorization: "[redacted:secret]",
        "set-cookie": ["[redacted:cookie]", "[redacted:cookie]"],
        "x-api-key": "[redacted:secret]",
        accept: "text/html"
      },
      nested: {
        deeper: {
          apiKey: "[redacted:secret]",
          client_secret: "[redacted:secret]",
          pin: "[redacted:secret]",
          cvv: "[redacted:card]",
          ssn: "[redacted:national_id]",
          author: "Ann"
        }
      },
      usage: { inputTokens: 1234, outputTokens: 56 },
      cookiesEnabled: true,
      password2: null
    })
  })

  it("redacts the values of page-fact fields, except checkbox and radio booleans", () => {
    const facts = {
      url: "https://x.com/form?step=2",
      title: "Sign up",
      fields: [
        { label: "Email", name: "email", type: "email", value: "jo@x.io" },
        { label: "Name", name: "name", type: "text", value: "Grace Hopper" },
        { label: "Password", name: "pw", type: "password", value: "[redacted]" },
        { label: "Agree", name: "agree", type: "checkbox", value: "on", checked: true },
        { label: "News", name: "news", type: "checkbox", value: true },
        { label: "Empty", name: "e", type: "text", value: "" },
        { label: "Colour", name: "c", type: "select-one", value: "red", options: ["Red", "Blue"] }
      ]
    }
    assert.deepStrictEqual(r.value(facts), {
      url: "https://x.com/form?step=[redacted:query]",
      title: "Sign up",
      fields: [
        { label: "Email", name: "email", type: "email", value: "[redacted:input]" },
        { label: "Name", name: "name", type: "text", value: "[redacted:input]" },
        { label: "Password", name: "pw", type: "password", value: "[redacted:password]" },
        { label: "Agree", name: "agree", type: "checkbox", value: "[redacted:input]", checked: true },
        { label: "News", name: "news", type: "checkbox", value: true },
        { label: "Empty", name: "e", type: "text", value: "" },
        { label: "Colour", name: "c", type: "select-one", value: "[redacted:input]", options: ["Red", "Blue"] }
      ]
    })
  })

  it("recognises typing actions, cookies, header lists, DOM elements and accessibility nodes", () => {
    assert.deepStrictEqual(r.value({ kind: "fill", target: "Email", value: "jo" }), {
      kind: "fill",
      target: "Email",
      value: "[redacted:typed]"
    })
    assert.deepStrictEqual(r.value({ kind: "type", text: "hello" }), { kind: "type", text: "[redacted:typed]" })
    assert.deepStrictEqual(
      r.value({ selector: "xpath=/html/body/input", method: "fill", arguments: ["hunter2"], description: "Email" }),
      { selector: "xpath=/html/body/input", method: "fill", arguments: ["[redacted:typed]"], description: "Email" }
    )
    assert.deepStrictEqual(r.value({ method: "click", arguments: ["left"] }), { method: "click", arguments: ["left"] })
    assert.deepStrictEqual(r.value([{ name: "sid", value: "s3", domain: ".x.com", httpOnly: true }]), [
      { name: "sid", value: "[redacted:cookie]", domain: ".x.com", httpOnly: true }
    ])
    assert.deepStrictEqual(
      r.value([
        { name: "Authorization", value: "Basic abc" },
        { name: "Accept", value: "*/*" }
      ]),
      [
        { name: "Authorization", value: "[redacted:secret]" },
        { name: "Accept", value: "*/*" }
      ]
    )
    assert.deepStrictEqual(r.value({ tagName: "INPUT", attributes: { id: "q" }, value: "x", text: "y" }), {
      tagName: "INPUT",
      attributes: { id: "q" },
      value: "[redacted:input]",
      text: "[redacted:input]"
    })
    assert.deepStrictEqual(
      r.value({
        nodeId: "7",
        role: { type: "role", value: "textbox" },
        name: { type: "computedString", value: "Email" },
        value: { type: "string", value: "jo@x.io" }
      }),
      {
        nodeId: "7",
        role: { type: "role", value: "textbox" },
        name: { type: "computedString", value: "Email" },
        value: { type: "string", value: "[redacted:input]" }
      }
    )
    assert.deepStrictEqual(r.value({ name: "timeout", value: 5000 }), { name: "timeout", value: 5000 })
    assert.deepStrictEqual(r.value({ metric: "latency", value: 12 }), { metric: "latency", value: 12 })
  })

  it("passes strings through text and URL-looking strings through url", () => {
    assert.deepStrictEqual(
      r.value({
        message: "failed for jo@x.io",
        href: "https://x.com/?q=1",
        link: "/path?x=1",
        proto: "//cdn.x.com/a.js?v=3",
        note: "what? a=b"
      }),
      {
        message: "failed for [redacted:email]",
        href: "https://x.com/?q=[redacted:query]",
        link: "/path?x=[redacted:query]",
        proto: "//cdn.x.com/a.js?v=[redacted:query]",
        note: "what? a=b"
      }
    )
  })

  it("leaves XPaths and selectors as written: they are not URLs", () => {
    const selectors = [
      "//*[@id='x']",
      "//a[contains(@href,'?token=1')]",
      "/html/body/div[2]/form/input[@name='q']",
      "(//button[normalize-space()='Apply'])[2]",
      "//input[@id='q#1']",
      "//div[@class='card']//button",
      "//label[text()='Email']/following-sibling::input"
    ]
    for (const selector of selectors) {
      assert.deepStrictEqual(
        r.value({ selector, action: { selector, method: "click" }, url: selector }),
        { selector, action: { selector, method: "click" }, url: selector },
        selector
      )
      assert.strictEqual(r.url(selector), selector)
    }
    // A URL with a query still loses its values, in a selector-like key or not.
    assert.deepStrictEqual(r.value({ selector: "/search?tags[]=a&q=secret", link: "//cdn.x.com/a.js?v=3" }), {
      selector: "/search?tags[]=[redacted:query]&q=[redacted:query]",
      link: "//cdn.x.com/a.js?v=[redacted:query]"
    })
    assert.strictEqual(r.url("//user:pw@x.com/a"), "//[redacted:userinfo]@x.com/a")
    assert.strictEqual(r.url("http://[::1]:8080/a?t=1"), "http://[::1]:8080/a?t=[redacted:query]")
  })

  it("copies deeply, handles cycles, depth, binary, errors, maps, sets and odd values", () => {
    const shared = { n: 1 }
    const cyclic: Record<string, unknown> = { name: "root", shared, again: shared }
    cyclic.self = cyclic
    cyclic.list = [cyclic, { back: cyclic }]
    const out = r.value(cyclic) as Record<string, unknown>
    assert.deepStrictEqual(out, {
      name: "root",
      shared: { n: 1 },
      again: { n: 1 },
      self: "[circular]",
      list: ["[circular]", { back: "[circular]" }]
    })
    assert.notStrictEqual(out.shared, shared)

    let deep: Record<string, unknown> = { leaf: true }
    for (let i = 0; i < 100; i++) deep = { d: deep }
    assert.include(JSON.stringify(r.value(deep)), '"[truncated]"')
    assert.deepStrictEqual(Redact.make({ maxDepth: 2 }).value({ a: { b: { c: 1 } } }), { a: { b: "[truncated]" } })

    assert.deepStrictEqual(
      r.value({ buf: Buffer.from("secret"), bytes: new Uint8Array(3), ab: new ArrayBuffer(8), big: 10n }),
      {
        buf: "[binary 6 bytes]",
        bytes: "[binary 3 bytes]",
        ab: "[binary 8 bytes]",
        big: "10"
      }
    )
    const error = new Error("login failed for jo@x.io", { cause: { password: "x" } })
    const e = r.value(error) as Record<string, unknown>
    assert.strictEqual(e.name, "Error")
    assert.strictEqual(e.message, "login failed for [redacted:email]")
    assert.notInclude(String(e.stack), "jo@x.io")
    assert.deepStrictEqual(e.cause, { password: "[redacted:password]" })

    assert.deepStrictEqual(
      r.value({
        m: new Map<unknown, unknown>([
          ["token", "abc"],
          [1, "jo@x.io"]
        ]),
        s: new Set(["jo@x.io"])
      }),
      { m: { token: "[redacted:secret]", "1": "[redacted:email]" }, s: ["[redacted:email]"] }
    )
    assert.deepStrictEqual(r.value({ f: () => 1, sym: Symbol("x"), u: undefined, n: Number.NaN }), {
      f: undefined,
      sym: undefined,
      u: undefined,
      n: Number.NaN
    })
    assert.deepStrictEqual(r.value({ at: { toJSON: () => ({ token: "abcdefgh" }) } }), {
      at: { token: "[redacted:secret]" }
    })
    assert.deepStrictEqual(r.value({ "jo@x.io": 1 }), { "[redacted:email]": 1 })
    const date = new Date(0)
    assert.strictEqual((r.value({ date }) as { date: Date }).date.getTime(), 0)
    const proto = r.value(JSON.parse('{"__proto__": {"password": "x"}}')) as Record<string, unknown>
    assert.deepStrictEqual(Object.getOwnPropertyDescriptor(proto, "__proto__")?.value, {
      password: "[redacted:password]"
    })
    assert.strictEqual(Object.getPrototypeOf(proto), Object.prototype)
  })
})

describe("Redact.make: configuration", () => {
  it("disables built-ins by name", () => {
    const redactor = Redact.make({ disable: ["email", "url"] })
    assert.strictEqual(redactor.text("jo@x.io https://x.com/?a=1"), "jo@x.io https://x.com/?a=1")
    assert.strictEqual(redactor.text("card 4111 1111 1111 1111"), "card [redacted:card]")
    assert.strictEqual(redactor.url("https://x.com/?a=1"), "https://x.com/?a=[redacted:query]")
  })

  it("adds patterns and sensitive keys, and takes a custom replacement", () => {
    const redactor = Redact.make({
      patterns: [
        { name: "employee", regex: /\bEMP-\d{6}\b/ },
        { name: "order", regex: /(?<=order #)\d+/gi }
      ],
      sensitiveKeys: ["employee_no", /^internal/]
    })
    redacts("badge EMP-123456 and EMP-654321", "badge [redacted:employee] and [redacted:employee]", redactor)
    redacts("Order #98765 shipped", "Order #[redacted:order] shipped", redactor)
    assert.deepStrictEqual(redactor.value({ employeeNo: 7, internalNotes: "x", internal_: "y", notes: "ok" }), {
      employeeNo: "[redacted:secret]",
      internalNotes: "[redacted:secret]",
      internal_: "[redacted:secret]",
      notes: "ok"
    })
    assert.strictEqual(Redact.make({ replacement: "***" }).text("jo@x.io and 123-45-6789"), "*** and ***")
    assert.strictEqual(Redact.make({ replacement: (k) => `<${k}>` }).text("jo@x.io"), "<email>")
  })
})

describe("Redact: canaries", () => {
  const canaries = {
    email: "canary.person@example-canary.com",
    card: "4000 0566 5566 5556",
    ssn: "219-09-9999",
    bearer: "cAnArYbEaReR0123456789",
    key: "sk-canaryCANARY0123456789abcdef",
    password: "C4n4ry-P4ssw0rd!",
    queryToken: "canaryquerytoken77",
    typed: "Canary Typed Name",
    phone: "+1 415 555 0134"
  }

  it("none of them appears in a redacted structure", () => {
    const log = {
      event: "engine_failure",
      message: `login as ${canaries.email} failed; card ${canaries.card}; ssn ${canaries.ssn}; call ${canaries.phone}`,
      request: {
        url: `https://shop.example.com/checkout?session=${canaries.queryToken}&step=2`,
        headers: { authorization: `Bearer ${canaries.bearer}` },
        body: JSON.stringify({ apiKey: canaries.key, nested: { password: canaries.password } })
      },
      facts: {
        fields: [
          { label: "Password", name: "password", type: "password", value: canaries.password },
          { label: "Name", name: "name", type: "text", value: canaries.typed }
        ]
      },
      instruction: `fill "Name" with "${canaries.typed}"`,
      action: { method: "fill", arguments: [canaries.typed] },
      snapshot: `<input name=pw value="${canaries.password}"><a href="/next?t=${canaries.queryToken}">x</a>`,
      system: [`Authorization: Bearer ${canaries.bearer}`, `OPENAI_API_KEY=${canaries.key}`, canaries.email],
      deep: { a: { b: { c: { d: [`password=${canaries.password}`, { token: canaries.queryToken }] } } } }
    }
    const written = JSON.stringify(r.value(log))
    for (const [name, canary] of Object.entries(canaries)) {
      assert.notInclude(written, canary, `${name} canary leaked`)
    }
    assert.include(written, "engine_failure")
    assert.include(written, "shop.example.com/checkout")
  })
})

describe("Redact: properties", () => {
  const fragments = Schema.Literals([
    "jo@x.io",
    "4111 1111 1111 1111",
    "4242424242424242",
    "123-45-6789",
    "+1 (555) 123-4567",
    "555-123-4567",
    "AB123456C",
    "passport: X1234567",
    "Bearer abc123def456",
    "sk-proj-Abc123def456ghi789jkl",
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig",
    "password:",
    "password=",
    "token=",
    "Authorization: ",
    "https://u:p@x.com/a?b=c#d=e",
    "?q=1&",
    '"',
    "'",
    "\\",
    "fill",
    "with",
    "type",
    "<input value=",
    "<textarea>",
    "</textarea>",
    "- textbox: ",
    "\n",
    " ",
    "-",
    ":",
    "=",
    "@",
    "[redacted:email]",
    "1234",
    "2026-02-21T10:11:12Z",
    "127.0.0.1:9222"
  ])
  const Piece = Schema.Union([fragments, Schema.String])
  const Text = Schema.Array(Piece).check(Schema.isMaxLength(12))

  it.prop("redacting twice is redacting once", [Text], ([pieces]) => {
    const once = r.text(pieces.join(""))
    assert.strictEqual(r.text(once), once)
  })

  it.prop("value is idempotent too", [Schema.Record(Schema.String, Text)], ([record]) => {
    const input = Object.fromEntries(Object.entries(record).map(([k, v]) => [k, { text: v.join(""), parts: v }]))
    const once = r.value(input)
    assert.deepStrictEqual(r.value(once), once)
  })

  const word = (pattern: RegExp) => Schema.String.check(Schema.isPattern(pattern))
  const email = Arbitrary.map(
    Arbitrary.schema(
      Schema.Tuple([
        word(/^[a-z0-9][a-z0-9._+-]{0,15}$/),
        word(/^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/),
        word(/^[a-z]{2,6}$/)
      ])
    ),
    ([local, domain, tld]) => `${local}@${domain}.${tld}`
  )

  it.prop("a generated email inside any text never survives", [Schema.String, email, Schema.String], ([a, e, b]) => {
    assert.notInclude(r.text(`${a} ${e} ${b}`), e)
    assert.notInclude(JSON.stringify(r.value({ note: `${a} ${e} ${b}`, list: [e] })), e)
  })

  const withCheckDigit = (body: string) => {
    for (let d = 0; d <= 9; d++) {
      const digits = body + d
      let sum = 0
      for (let i = 0; i < digits.length; i++) {
        let n = Number(digits[digits.length - 1 - i])
        if (i % 2 === 1) n = n * 2 > 9 ? n * 2 - 9 : n * 2
        sum += n
      }
      if (sum % 10 === 0) return digits
    }
    return body + "0"
  }
  const card = Arbitrary.map(
    Arbitrary.schema(Schema.Tuple([word(/^[2-6]\d{14}$/), Schema.Literals(["", " ", "-"])])),
    ([body, separator]) => (withCheckDigit(body).match(/\d{4}/g) ?? []).join(separator)
  )

  it.prop(
    "a generated card number inside any text never survives",
    [Schema.String, card, Schema.String],
    ([a, c, b]) => {
      assert.notInclude(r.text(`${a} ${c} ${b}`), c)
    }
  )
})

describe("maskInputsScript", () => {
  it("is a self-contained expression for the page, and its undo", () => {
    for (const script of [Redact.maskInputsScript, Redact.unmaskInputsScript]) {
      assert.doesNotThrow(() => new Function(`return ${script}`))
      assert.include(script, "switchyard-mask")
    }
    assert.include(Redact.maskInputsScript, "-webkit-text-fill-color: transparent")
    assert.notInclude(Redact.maskInputsScript, "text-security", "glyph widths would move the layout under a DOM call")
    assert.include(Redact.maskInputsScript, "document.head || document.documentElement")
  })
})
