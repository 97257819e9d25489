/**
 * Names as they are written: star ratings and reactions made of symbols, skills that differ only by a symbol (C, C#,
 * C++), emoji in a label, Japanese and Chinese labels without spaces, and text a page makes clickable (a span) beside
 * a paragraph that mentions the same words.
 */
import { pattern, recordScript, reportState } from "../Pattern.ts"

export const patterns = [
  pattern({
    name: "symbol-names-ratings-and-reactions",
    class: "names",
    pages: {
      "/review.html": `<!doctype html><title>Rate your interview</title>${recordScript}
<h1>How was your interview?</h1>
<div class="stars">${["★", "★★", "★★★", "★★★★", "★★★★★"].map((s, i) => `<button onclick="record({ stars: ${i + 1} })">${s}</button>`).join(" ")}</div>
<h2>React to this post</h2>
<div class="reactions"><button onclick="record({ reaction: 'plus' })">+1</button> <button onclick="record({ reaction: 'minus' })">-1</button> <button onclick="record({ reaction: 'love' })">♥♥♥</button></div>
<button onclick="record({ saved: true })">❤️ Save</button>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/review.html") })
      const expected: Array<Record<string, unknown>> = []
      const clicks: Array<[string, Record<string, unknown>]> = [
        ["★★★★", { stars: 4 }],
        ["★", { stars: 1 }],
        ["+1", { reaction: "plus" }],
        ["-1", { reaction: "minus" }],
        ["♥♥♥", { reaction: "love" }],
        ["❤️ Save", { saved: true }]
      ]
      for (const [name, posted] of clicks) {
        await agent.ok("browser.act", { instruction: `click "${name}"` })
        expected.push(posted)
        await agent.expectRecorded(expected, `after click "${name}"`)
      }
    }
  }),
  pattern({
    name: "symbol-names-skills-c-csharp-cpp",
    class: "names",
    pages: {
      "/skills.html": `<!doctype html><title>Skills</title>${reportState}
<form id="f">
<fieldset><legend>Languages you have shipped code in</legend>
${["C", "C#", "C++", "F#", ".NET", "Node.js"].map((s, i) => `<label><input type="checkbox" name="s${i}" value="${s}"> ${s}</label><br>`).join("\n")}
</fieldset>
</form>
<script>function state() { return { picked: [...f.querySelectorAll("input:checked")].map((i) => i.value) } }</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/skills.html") })
      await agent.ok("browser.act", { instruction: 'check "C#"' })
      await agent.expectState({ picked: ["C#"] }, 'after check "C#"')
      await agent.ok("browser.act", { instruction: 'check "C++"' })
      await agent.expectState({ picked: ["C#", "C++"] }, 'after check "C++"')
      await agent.ok("browser.act", { instruction: 'check "C"' })
      await agent.expectState({ picked: ["C", "C#", "C++"] }, 'after check "C"')
      await agent.ok("browser.act", { instruction: 'check ".NET"' })
      await agent.expectState({ picked: ["C", "C#", "C++", ".NET"] }, 'after check ".NET"')
    }
  }),
  pattern({
    name: "labels-in-scripts-without-spaces",
    class: "names",
    pages: {
      "/ja.html": `<!doctype html><html lang="ja"><title>応募フォーム</title>${recordScript}
<h1>応募フォーム</h1>
<form method="post" action="record">
  <p><label for="name">お名前（必須）</label> <input id="name" name="name"></p>
  <p><label for="mail">メールアドレス（必須）</label> <input id="mail" name="mail" type="email"></p>
  <p><label for="tel">電話番号（任意）</label> <input id="tel" name="tel"></p>
  <button>送信する</button>
</form></html>`,
      "/zh.html": `<!doctype html><html lang="zh"><title>申请职位</title>${recordScript}
<form method="post" action="record">
  <p><label for="phone">手机号码（选填）</label> <input id="phone" name="phone"></p>
  <p><label for="city">所在城市</label> <select id="city" name="city"><option></option><option>北京</option><option>上海</option><option>深圳</option></select></p>
  <button>提交申请</button>
</form></html>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/ja.html") })
      await agent.ok("browser.act", { instruction: 'fill "お名前" with "山田太郎"' })
      await agent.ok("browser.act", { instruction: 'fill "メールアドレス" with "taro@example.jp"' })
      await agent.ok("browser.act", { instruction: 'click "送信"' })
      await agent.expectRecorded([{ name: "山田太郎", mail: "taro@example.jp", tel: "" }], "the Japanese form post")
      await agent.ok("browser.navigate", { url: agent.url("/zh.html") })
      await agent.ok("browser.act", { instruction: 'fill "手机号码" with "13800138000"' })
      await agent.ok("browser.act", { instruction: 'select "上海" in "所在城市"' })
      await agent.ok("browser.act", { instruction: 'click "提交"' })
      await agent.expectRecorded(
        [
          { name: "山田太郎", mail: "taro@example.jp", tel: "" },
          { phone: "13800138000", city: "上海" }
        ],
        "the Chinese form post"
      )
    }
  }),
  pattern({
    name: "text-only-clickables-beside-prose",
    class: "names",
    pages: {
      // Filter chips and a "Show more" made of spans the page makes clickable (a listener, a pointer cursor), next to
      // prose that mentions the same words.
      "/job.html": `<!doctype html><title>Backend engineer</title>${recordScript}
<style>.chip{display:inline-block;padding:2px 10px;border:1px solid #999;border-radius:12px;cursor:pointer;margin-right:4px}
.more{color:#2557a7;cursor:pointer}</style>
<h1>Backend engineer</h1>
<p>Filter similar roles: <span class="chip">Remote</span><span class="chip">Hybrid</span><span class="chip">On-site</span></p>
<p>We are a Remote first company. Hybrid and On-site arrangements exist in Berlin. Click Show more to read about benefits.</p>
<p id="desc">You will build APIs in Go.</p>
<span class="more" onclick="record({ clicked: 'show more' }); this.remove()">Show more</span>
<script>
document.querySelector("p").addEventListener("click", (e) => { if (e.target.classList.contains("chip")) record({ chip: e.target.textContent }) })
</script>`
    },
    run: async (agent) => {
      await agent.ok("browser.navigate", { url: agent.url("/job.html") })
      await agent.ok("browser.act", { instruction: 'click "Hybrid"' })
      await agent.expectRecorded([{ chip: "Hybrid" }], 'after click "Hybrid"')
      await agent.ok("browser.act", { instruction: 'click "Show more"' })
      await agent.expectRecorded([{ chip: "Hybrid" }, { clicked: "show more" }], 'after click "Show more"')
      await agent.ok("browser.act", { instruction: 'click "Remote"' })
      await agent.expectRecorded(
        [{ chip: "Hybrid" }, { clicked: "show more" }, { chip: "Remote" }],
        'after click "Remote"'
      )
    }
  })
]
