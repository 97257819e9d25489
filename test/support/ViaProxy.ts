/** A request sent through the egress proxy as a browser sends it (absolute form), with its answer read whole. */
import type { IncomingHttpHeaders } from "node:http"
import { request } from "node:http"
import * as Policy from "../../src/Egress/Policy.ts"
import * as EgressProxy from "../../src/Egress/Proxy.ts"

/** An egress proxy that lets through the test's own sites on 127.0.0.1 (private addresses allowed), for the scope. */
export const loopbackProxy = EgressProxy.start({
  policy: Policy.make({}, { privateNetworks: true }),
  onBlock: () => {}
})

export interface ProxiedAnswer {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

export const viaProxy = (
  proxyPort: number,
  url: string,
  options: { readonly method?: string; readonly headers?: Record<string, string>; readonly body?: string } = {}
) =>
  new Promise<ProxiedAnswer>((resolve, reject) => {
    const { body } = options
    const req = request(
      {
        host: "127.0.0.1",
        port: proxyPort,
        method: options.method ?? "GET",
        path: url,
        headers: {
          host: new URL(url).host,
          ...(body === undefined
            ? {}
            : {
                "content-type": "application/x-www-form-urlencoded",
                "content-length": String(Buffer.byteLength(body))
              }),
          ...options.headers
        },
        agent: false,
        // As large as the proxy passes on.
        maxHeaderSize: 1024 * 1024
      },
      (res) => {
        let text = ""
        res.on("data", (c) => (text += String(c)))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }))
      }
    )
    req.on("error", reject)
    req.end(body)
  })
