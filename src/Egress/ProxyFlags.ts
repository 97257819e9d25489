/**
 * The Chromium flags that send a browser's every request through a proxy, in a module of their own with no effect:
 * the early launch (Sandbox/Provider/EarlyBrowser.ts) uses them before the service's modules load.
 */

/**
 * Chromium flags that send every request through the proxy: loopback too (Chromium bypasses proxies for loopback
 * unless told `<-loopback>`). WebRTC's UDP is kept off by the profile's preference (LocalChromium.ts): no switch does it.
 */
export const chromiumArgs = (proxyUrl: string): ReadonlyArray<string> => [
  `--proxy-server=${proxyUrl}`,
  "--proxy-bypass-list=<-loopback>"
]
